import { requestLogging } from '@eggmesh/service-kit';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';

/** What the endpoints show of the relay (the Relay of @eggmesh/log-kafka, built by main.ts). */
export interface RelayStatus {
  /** True while the broker answers. */
  readonly isReady: boolean;
  /** The last position known to be in the topic; null before the broker answered. */
  readonly position: number | null;
  readonly publishedTotal: number;
  readonly failures: number;
  lag(): Promise<{ readonly head: number; readonly entries: number; readonly ms: number }>;
}

export interface RelayAppOptions {
  readonly relay: RelayStatus;
  readonly topic: string;
  /** True while the publish loop runs. */
  readonly running: () => boolean;
  readonly logger?: FastifyServerOptions['logger'];
}

/** Health, readiness and metrics of the relay; it takes no client traffic. */
export function buildApp(options: RelayAppOptions): FastifyInstance {
  const { relay } = options;
  const app = Fastify({ logger: options.logger ?? false, logController: requestLogging(false) });
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    const published = relay.position;
    if (!options.running()) {
      reply.code(503);
      return { status: 'stopped', topic: options.topic, published };
    }
    if (!relay.isReady) {
      reply.code(503);
      return {
        status: 'unavailable',
        reason: 'the Kafka broker does not answer; retrying',
        topic: options.topic,
        published,
      };
    }
    try {
      const lag = await relay.lag();
      return {
        status: 'ready',
        topic: options.topic,
        published,
        head: lag.head,
        lag: lag.entries,
        lagMs: lag.ms,
      };
    } catch (error) {
      reply.code(503);
      return {
        status: 'unavailable',
        reason: `the primary's log cannot be read: ${String(error)}`,
        topic: options.topic,
      };
    }
  });
  app.get('/metrics', async (_request, reply) => {
    reply.type('text/plain; version=0.0.4');
    const lag = await relay.lag().catch(() => null);
    const lines: Array<readonly [string, 'gauge' | 'counter', string, number]> = [
      ['eggmesh_relay_ready', 'gauge', '1 while the broker answers', relay.isReady ? 1 : 0],
      [
        'eggmesh_relay_published_position',
        'gauge',
        'Last log position known to be in the topic',
        relay.position ?? 0,
      ],
      [
        'eggmesh_relay_published_total',
        'counter',
        'Log entries published by this process',
        relay.publishedTotal,
      ],
      [
        'eggmesh_relay_failures_total',
        'counter',
        'Failed connects or publishes (each followed by a retry)',
        relay.failures,
      ],
    ];
    if (lag) {
      lines.push(
        ['eggmesh_log_head', 'gauge', "Newest position of the primary's log", lag.head],
        ['eggmesh_relay_lag_entries', 'gauge', 'Log entries not yet in the topic', lag.entries],
        ['eggmesh_relay_lag_ms', 'gauge', 'Age of the oldest log entry not yet in the topic (ms)', lag.ms],
      );
    }
    return `${lines.map(([name, type, help, value]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}`).join('\n')}\n`;
  });
  return app;
}
