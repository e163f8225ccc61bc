import { requestLogging } from '@eggmesh/service-kit';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { metricsText } from './metrics.js';
import type { Projector } from './projector.js';

export interface ProjectorAppOptions {
  readonly projector: Projector;
  /** True while the apply loop runs. */
  readonly running: () => boolean;
  readonly logger?: FastifyServerOptions['logger'];
}

/** Health, readiness and metrics of the projector; it takes no client traffic. */
export function buildApp(options: ProjectorAppOptions): FastifyInstance {
  const { projector } = options;
  const app = Fastify({ logger: options.logger ?? false, logController: requestLogging(false) });
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    try {
      const position = await projector.store.checkpoint();
      const head = await projector.log.head();
      if (!options.running()) {
        reply.code(503);
        return { status: 'stopped', position, head };
      }
      return { status: 'ready', position, head, lag: head - position };
    } catch (error) {
      reply.code(503);
      return { status: 'unavailable', error: String(error) };
    }
  });
  app.get('/metrics', async (_request, reply) => {
    reply.type('text/plain; version=0.0.4');
    return metricsText(projector, await projector.store.checkpoint(), await projector.log.head());
  });
  return app;
}
