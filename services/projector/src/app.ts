import {
  answerClientError,
  type ConfigOf,
  createMetrics,
  requestLogging,
  servicePlugin,
} from '@eggmesh/service-kit';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { registerProjectorMetrics } from './metrics.js';
import type { Projector } from './projector.js';

export interface ProjectorAppOptions {
  readonly config: ConfigOf<'projector'>;
  readonly projector: Projector;
  /** True while the apply loop runs. */
  readonly running: () => boolean;
  /** Why the log cannot be read now (e.g. the Kafka broker does not answer), or null when it can. */
  readonly logProblem?: () => string | null;
  readonly logger?: FastifyServerOptions['logger'];
}

/** Health, readiness and metrics of the projector; it takes no client traffic. */
export function buildApp(options: ProjectorAppOptions): FastifyInstance {
  const { projector } = options;
  const app = Fastify({
    logger: options.logger ?? false,
    logController: requestLogging(false),
    clientErrorHandler: answerClientError,
  });
  const metrics = createMetrics();
  app.register(servicePlugin, { config: options.config, service: 'projector', metrics });
  registerProjectorMetrics(metrics, projector);
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    try {
      const problem = options.logProblem?.() ?? null;
      if (problem !== null) {
        reply.code(503);
        return { status: 'unavailable', error: problem };
      }
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
  return app;
}
