import {
  answerClientError,
  type ConfigOf,
  createMetrics,
  requestLogging,
  servicePlugin,
} from '@eggmesh/service-kit';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Registry } from 'prom-client';
import type { SyncStatus } from './sync.js';

export interface LegacySyncAppOptions {
  readonly config: ConfigOf<'legacy-sync'>;
  readonly status: () => SyncStatus;
  readonly logger?: FastifyServerOptions['logger'];
}

/**
 * Health, readiness and metrics of the anti-corruption layer; it takes no client traffic. /ready is
 * 503 while the consumer does not run, and 200 otherwise with the counts and every dead letter and its
 * reason: a dead letter is a data problem to see, not a reason to take the layer out of service.
 */
export function buildApp(options: LegacySyncAppOptions): { app: FastifyInstance; registry: Registry } {
  const app = Fastify({
    logger: options.logger ?? false,
    logController: requestLogging(false),
    clientErrorHandler: answerClientError,
  });
  const metrics = createMetrics();
  app.register(servicePlugin, { config: options.config, service: 'legacy-sync', metrics });
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    const status = options.status();
    if (!status.running) reply.code(503);
    return { status: status.running ? 'ready' : 'stopped', source: options.config.legacy.source, ...status };
  });
  return { app, registry: metrics.registry };
}
