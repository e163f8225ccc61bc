import type { FastifyInstance } from 'fastify';
import { withServiceDefaults } from './app.js';
import { type Config, exitCodes } from './config.js';
import { applyHttpLimits } from './http-limits.js';
import { acceptsConnections } from './port-check.js';

export interface ServeOptions {
  readonly port: number;
  readonly config: Pick<Config, 'host' | 'shutdownTimeoutMs' | 'http' | 'trustedProxies' | 'bodyLimitBytes'>;
  /** Runs after the server stopped taking requests and finished the in-flight ones. */
  readonly onClose?: () => Promise<void> | void;
  /** The service's name in /health; defaults to the `service` of its logger (see loggerOptions). */
  readonly name?: string;
}

/** The `service` binding of a pino logger, if the app has one. */
function loggerService(app: FastifyInstance): string | undefined {
  const log: object = app.log;
  if (!('bindings' in log) || typeof log.bindings !== 'function') return undefined;
  const bindings: unknown = log.bindings();
  if (typeof bindings !== 'object' || bindings === null || !('service' in bindings)) return undefined;
  return typeof bindings.service === 'string' ? bindings.service : undefined;
}

/**
 * JSON Schema of what `GET /health` answers once serve() added its fields; a route that declares a
 * response schema for /health must use it, or serialization would drop those fields.
 */
export const healthResponseSchema = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['ok'] },
    service: { type: 'string', description: 'Which eggmesh service answered' },
    pid: { type: 'integer' },
    uptimeS: { type: 'integer', minimum: 0 },
  },
} as const;

/**
 * Listens with the client limits of `config.http` (timeouts, connection caps, see applyHttpLimits),
 * adds the service name, pid and uptime to the body of `GET /health` (cheap: it is what an orchestrator
 * probes for liveness), and on SIGTERM or SIGINT stops
 * taking requests, lets in-flight ones finish, runs `onClose` and exits 0; past the shutdown timeout
 * it exits 1.
 */
export async function serve(app: FastifyInstance, options: ServeOptions): Promise<void> {
  const service = options.name ?? loggerService(app) ?? 'unknown';
  const prepare = (served: FastifyInstance, name: string) => {
    applyHttpLimits(served.server, options.config, served.log);
    // Built by serviceApp() already, or (the read-api builds its own Fastify) given the defaults here.
    withServiceDefaults(served);
    // Callback-style: an async hook would cost every answer a promise for /health's sake.
    served.addHook('preSerialization', (request, _reply, payload: unknown, done) => {
      if (
        request.routeOptions.url !== '/health' ||
        typeof payload !== 'object' ||
        payload === null ||
        Array.isArray(payload)
      ) {
        done(null, payload);
        return;
      }
      done(null, {
        ...payload,
        service: name,
        pid: process.pid,
        uptimeS: Math.round(process.uptime()),
      });
    });
  };
  prepare(app, service);
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
  await listenWhenFree(app, options.port, options.config.host);
}

/** How long serve() waits for a connection that holds its port (not a listener) to go away. */
const HELD_PORT_WAIT_MS = 30_000;

/**
 * Listens on `port`. A port held by a socket that is not listening (an outgoing connection of any
 * process on this host that got it as its ephemeral port, or its TIME_WAIT once closed) goes away by
 * itself: it is retried for HELD_PORT_WAIT_MS, not given up as for a port another server listens on,
 * which exits with the code the supervisor recognises.
 */
async function listenWhenFree(app: FastifyInstance, port: number, host: string): Promise<void> {
  const deadline = Date.now() + HELD_PORT_WAIT_MS;
  let told = false;
  for (;;) {
    try {
      await app.listen({ port, host });
      return;
    } catch (error) {
      if (!(error instanceof Error) || !('code' in error) || error.code !== 'EADDRINUSE') throw error;
      if (await acceptsConnections(port, host)) {
        // Restarting cannot fix this: say which port, and exit with the code the supervisor recognises.
        app.log.fatal(
          { port, host },
          `cannot listen: port ${port} on ${host} is in use by another process (is another eggmesh running?)`,
        );
        process.exit(exitCodes.portInUse);
      }
      if (Date.now() > deadline) throw error;
      if (!told) {
        app.log.warn(
          { port, host },
          `port ${port} is held by a connection, not a listener; waiting for it to close`,
        );
        told = true;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Fastify logger options shared by the services: JSON lines with the service name. Credentials never
 * reach a log line: an `authorization` or `cookie` header anywhere in a logged object is censored.
 */
export function loggerOptions(config: Pick<Config, 'logLevel'>, service: string) {
  return {
    level: config.logLevel,
    base: { service },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'headers.cookie',
        '*.headers.authorization',
        '*.headers.cookie',
      ],
      censor: '[redacted]',
    },
  };
}
