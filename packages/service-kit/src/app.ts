import type { Server } from 'node:http';
import Fastify, { type FastifyHttpOptions, type FastifyInstance, LogController } from 'fastify';
import type { Config } from './config.js';
import { answerClientError, lingerOnRefusedBody } from './http-limits.js';

const prepared = new WeakSet<FastifyInstance>();

/**
 * What every eggmesh app needs however it is served (listening through serve(), or on its own in a
 * test): a refused upload (413) is read to
 * its end before the answer, so the client gets the 413 instead of a reset; once closing, in-flight
 * answers say `Connection: close`. Idempotent: an app gets each hook once.
 */
export function withServiceDefaults<A extends FastifyInstance>(app: A): A {
  if (prepared.has(app)) return app;
  prepared.add(app);
  lingerOnRefusedBody(app, 10_000);
  closeConnectionsWhenClosing(app);
  return app;
}

/**
 * The one builder of the services' Fastify apps: Fastify with the body limit, request logging and
 * trusted proxies of `config` (`x-forwarded-for` is believed from those only, so `request.ip` is the
 * client the rate limit counts), requests the HTTP parser refuses answered in the services' error
 * format (`answerClientError`), and withServiceDefaults() applied.
 */
export function serviceApp(
  config: Pick<Config, 'bodyLimitBytes' | 'logRequests' | 'trustedProxies'>,
  options: FastifyHttpOptions<Server> = {},
): FastifyInstance {
  const app: FastifyInstance = Fastify({
    bodyLimit: config.bodyLimitBytes,
    logController: requestLogging(config.logRequests),
    clientErrorHandler: answerClientError,
    trustProxy: [...config.trustedProxies],
    ...options,
  });
  return withServiceDefaults(app);
}

const closingAware = new WeakSet<FastifyInstance>();

/**
 * Once the app is closing, answers in-flight requests with `Connection: close`: a socket a client keeps
 * alive would otherwise hold `app.close()`, and the process, open until the shutdown timeout.
 * Idempotent.
 */
export function closeConnectionsWhenClosing(app: FastifyInstance): void {
  if (closingAware.has(app)) return;
  closingAware.add(app);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}

/** Fastify's per-request log lines, on only when asked for (they cost throughput). */
export function requestLogging(enabled: boolean): LogController {
  return new LogController({ disableRequestLogging: !enabled });
}
