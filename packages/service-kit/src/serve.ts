import { type FastifyInstance, LogController } from 'fastify';
import type { Config } from './config.js';

export interface ServeOptions {
  readonly port: number;
  readonly config: Config;
  /** Runs after the server stopped taking requests and finished the in-flight ones. */
  readonly onClose?: () => Promise<void> | void;
}

/**
 * Listens, and on SIGTERM or SIGINT stops taking requests, lets in-flight ones finish, runs `onClose`
 * and exits 0; past the shutdown timeout it exits 1.
 */
export async function serve(app: FastifyInstance, options: ServeOptions): Promise<void> {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, options.config.shutdownTimeoutMs);
    timer.unref();
    try {
      await app.close();
      await options.onClose?.();
      app.log.info('stopped');
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ port: options.port, host: options.config.host });
}

/** Fastify logger options shared by the services: JSON lines with the service name. */
export function loggerOptions(config: Config, service: string) {
  return { level: config.logLevel, base: { service } };
}

/** Fastify's per-request log lines, on only when asked for (they cost throughput). */
export function requestLogging(enabled: boolean): LogController {
  return new LogController({ disableRequestLogging: !enabled });
}

/**
 * Once the app is closing, answers in-flight requests with `Connection: close`: a socket a client keeps
 * alive would otherwise hold `app.close()`, and the process, open until the shutdown timeout.
 */
export function closeConnectionsWhenClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });
}
