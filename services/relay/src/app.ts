import {
  answerClientError,
  type ConfigOf,
  createMetrics,
  requestLogging,
  servicePlugin,
} from '@eggmesh/service-kit';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';

/** What the endpoints show of the relay (the Relay of @eggmesh/log-kafka, built by main.ts). */
export interface RelayStatus {
  /** True while the broker answers. */
  readonly isReady: boolean;
  /** Why the relay refuses the topic (it would lose acknowledged entries with one broker); null when it does not. */
  readonly refusal: string | null;
  /** The last position known to be in the topic; null before the broker answered. */
  readonly position: number | null;
  readonly publishedTotal: number;
  readonly failures: number;
  lag(): Promise<{ readonly head: number; readonly entries: number; readonly ms: number }>;
}

export interface RelayAppOptions {
  readonly config: ConfigOf<'relay'>;
  readonly relay: RelayStatus;
  readonly topic: string;
  /** True while the publish loop runs. */
  readonly running: () => boolean;
  readonly logger?: FastifyServerOptions['logger'];
}

/** Health, readiness and metrics of the relay; it takes no client traffic. */
export function buildApp(options: RelayAppOptions): FastifyInstance {
  const { relay } = options;
  const app = Fastify({
    logger: options.logger ?? false,
    logController: requestLogging(false),
    clientErrorHandler: answerClientError,
  });
  const metrics = createMetrics();
  app.register(servicePlugin, { config: options.config, service: 'relay', metrics });
  registerRelayMetrics(metrics.registry, relay);
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
        reason: relay.refusal ?? 'the Kafka broker does not answer; retrying',
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
  return app;
}

/** The relay's progress on the service's prom-client registry, read when scraped. */
function registerRelayMetrics(registry: Registry, relay: RelayStatus): void {
  const registers = [registry];
  // One lag reading per scrape, shared by the three gauges that show it (collects run concurrently).
  let reading: ReturnType<RelayStatus['lag']> = Promise.resolve({ head: 0, entries: 0, ms: 0 });
  const gauge = (name: string, help: string, read: () => number | Promise<number>) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        this.set(await read());
      },
    });
  const counter = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  gauge('eggmesh_relay_ready', '1 while the broker answers', () => (relay.isReady ? 1 : 0));
  gauge(
    'eggmesh_relay_published_position',
    'Last log position known to be in the topic',
    () => relay.position ?? 0,
  );
  counter(
    'eggmesh_relay_published_total',
    'Log entries published by this process',
    () => relay.publishedTotal,
  );
  counter(
    'eggmesh_relay_failures_total',
    'Failed connects or publishes (each followed by a retry)',
    () => relay.failures,
  );
  gauge('eggmesh_log_head', "Newest position of the primary's log", async () => {
    reading = relay.lag();
    return (await reading).head;
  });
  gauge('eggmesh_relay_lag_entries', 'Log entries not yet in the topic', async () => (await reading).entries);
  gauge(
    'eggmesh_relay_lag_ms',
    'Age of the oldest log entry not yet in the topic (ms)',
    async () => (await reading).ms,
  );
}
