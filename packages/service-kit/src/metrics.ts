import type { FastifyInstance, FastifySchema } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** Seconds; from a cache hit (~0.1 ms) to a big bulk write or a slow GraphQL query. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface Metrics {
  /** The process's registry: add service metrics to it (`registers: [metrics.registry]`). */
  readonly registry: Registry;
  /** Times one storage call: `eggmesh_store_duration_seconds{operation}`. */
  timeStore<T>(operation: string, work: () => Promise<T>): Promise<T>;
  /** Counts one answer under its route pattern (installMetrics() calls it for every answer). */
  observeRequest(route: string, method: string, statusCode: number, seconds: number): void;
}

type Child = { observe(value: number): void };
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const classIndex = (statusCode: number) => Math.min(4, Math.max(0, Math.floor(statusCode / 100) - 1));

/**
 * One process's metrics: the standard Node process metrics (prom-client's defaults, event-loop lag
 * included, prefixed `nodejs_`/`process_`), `eggmesh_http_request_duration_seconds{route,method,
 * status_class}` (its `_count` is the request count) and `eggmesh_store_duration_seconds`. A process
 * that serves several apps (a test serving several apps) makes one and gives it to each app's
 * installMetrics(), so its `/metrics` counts every answer once, by the route that gave it.
 */
export function createMetrics(): Metrics {
  const registry = new Registry();
  // prom-client samples the event-loop delay every 10 ms by default: 100 wake-ups a second, about 0.65 %
  // of a core in an idle process (measured over 20 s, /proc/<pid>/stat), the whole idle budget of a
  // stack. Once a second is enough for nodejs_eventloop_lag_*; /health has its own finer histogram.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1000 });
  const requests = new Histogram({
    name: 'eggmesh_http_request_duration_seconds',
    help: 'HTTP request latency by route pattern, method and status class (its _count counts requests)',
    labelNames: ['route', 'method', 'status_class'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const store = new Histogram({
    name: 'eggmesh_store_duration_seconds',
    help: 'Storage call latency by operation',
    labelNames: ['operation'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  /** observeRequest's label children, made once each (prom-client's labels() hashes its arguments). */
  const children = new Map<string, Child>();
  return {
    registry,
    observeRequest(route, method, statusCode, seconds) {
      const index = classIndex(statusCode);
      const key = `${route} ${method} ${index}`;
      let child = children.get(key);
      if (child === undefined) {
        child = requests.labels(route, method, STATUS_CLASSES[index] as string);
        if (children.size < 1024) children.set(key, child);
      }
      child.observe(seconds);
    },
    async timeStore(operation, work) {
      const end = store.startTimer({ operation });
      try {
        return await work();
      } finally {
        end();
      }
    },
  };
}

/**
 * Prometheus metrics for one app, served at `GET /metrics`: those of `shared` (the process's, see
 * createMetrics()) or of a registry of its own. Every answer is counted under its route pattern, so
 * routes declared before or after this call alike; requests no route matches are counted under
 * `route="(unmatched)"`.
 */
export function installMetrics(
  app: FastifyInstance,
  options: { readonly service: string; readonly shared?: Metrics | undefined },
): Metrics {
  const metrics = options.shared ?? createMetrics();
  const { registry } = metrics;
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.is404 ? '(unmatched)' : (request.routeOptions.url ?? '(unmatched)');
    metrics.observeRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { schema: { hide: true } as FastifySchema }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  return metrics;
}
