import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import helmet from 'helmet';
import { withServiceDefaults } from './app.js';
import type { Config } from './config.js';
import { EggmeshError } from './errors.js';
import { corsOptions, helmetOptions, pageHelmetOptions, utf8JsonOnly } from './http-security.js';
import { createMetrics, installMetrics, type Metrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An HTML page of `ServicePluginOptions.pages`: it gets PAGE_CSP instead of the API's policy. */
    page?: boolean;
  }
}

export interface ServicePluginOptions {
  /** The service's settings: CORS origins, the rate limit, the app defaults of withServiceDefaults(). */
  readonly config: Pick<Config, 'corsOrigin' | 'rateLimitPerMin' | 'trustedProxies'>;
  /** The service's name on its metrics. */
  readonly service: string;
  /** The process's metrics, for a service that times its own work on them; else the app gets its own. */
  readonly metrics?: Metrics | undefined;
  /**
   * Path prefixes of the HTML pages the app serves (GraphiQL, Swagger UI): their routes get the page
   * Content-Security-Policy (PAGE_CSP) instead of the API's. Routes must be declared after the plugin
   * has loaded (register it with `await`, or declare the pages inside a later `register`).
   */
  readonly pages?: readonly string[];
}

/**
 * Paths neither the rate limit nor overload shedding ever refuse: what an orchestrator probes for
 * liveness (`/health`) and readiness (`/ready`, which answers for itself), and metric scrapes, which
 * matter most when the service is busy.
 */
const ALWAYS_ANSWERED = new Set(['/health', '/ready', '/metrics']);

/**
 * Overload: a service whose event loop is late by more than MAX_EVENT_LOOP_DELAY_MS on average over
 * OVERLOAD_WINDOWS windows in a row (under-pressure's one-second samples) answers 503
 * EGGMESH_OVERLOADED to new requests until a window says it caught up. A loop that late adds a second
 * to every answer, which clients with timeouts of a few seconds are about to give up on anyway;
 * answering the excess at once frees the loop for the requests already accepted and keeps /health
 * answering. One window is not enough: one block of the loop (a start-up, a long synchronous job, one
 * long query) makes exactly one late window, however long it lasts, and is not a backlog to shed.
 * Event-loop utilization is not used: a saturated service that keeps up (a benchmark, a burst) is near
 * 100 % busy while answering every request in milliseconds, and shedding then would turn fast answers
 * into errors.
 */
const MAX_EVENT_LOOP_DELAY_MS = 1000;
const OVERLOAD_SAMPLE_MS = 1000;
const OVERLOAD_WINDOWS = 2;
/** How long an overloaded service asks clients to wait (seconds): long enough for two new windows. */
const OVERLOAD_RETRY_AFTER_S = 2;

/** The rate limit counts requests per client address over one minute, starting at its first request. */
const RATE_LIMIT_WINDOW_MS = 60_000;
/**
 * Client addresses the rate limit tracks at once. Past it the least recently seen one is forgotten
 * (an LRU), so a flood of new addresses never stops the counting of the next one; a forgotten client
 * starts a fresh window. About 100 bytes each: 10 MiB at most.
 */
const RATE_LIMIT_CLIENTS = 100_000;

/**
 * Counts the late windows in a row: reads under-pressure's figure at most once a window (a blocked loop
 * delays this timer as much as under-pressure's own) and resets the count on the first window that is
 * on time. Not by change of value: a window in which the loop never turned reads Infinity, and so does
 * the next one.
 */
function lateWindows(app: FastifyInstance): () => number {
  let late = 0;
  let readAt = Number.NEGATIVE_INFINITY;
  const watch = setInterval(() => {
    const now = performance.now();
    if (now - readAt < OVERLOAD_SAMPLE_MS) return;
    readAt = now;
    late = app.memoryUsage().eventLoopDelay > MAX_EVENT_LOOP_DELAY_MS ? late + 1 : 0;
  }, OVERLOAD_SAMPLE_MS / 2);
  watch.unref();
  app.addHook('onClose', async () => clearInterval(watch));
  return () => late;
}

const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

/**
 * Everything every eggmesh service puts around its routes, in one Fastify plugin: JSON bodies in UTF-8
 * only (utf8JsonOnly), helmet's
 * security headers (PAGE_CSP on the `pages`, API_CSP elsewhere), @fastify/cors, overload shedding with
 * @fastify/under-pressure (503 EGGMESH_OVERLOADED with `retry-after`), the per-client rate limit of
 * `EGGMESH_RATE_LIMIT_PER_MIN` with @fastify/rate-limit (429 EGGMESH_RATE_LIMITED with
 * `retry-after`), Prometheus metrics at `/metrics`, and withServiceDefaults(). The client address is
 * `request.ip`: the app's `trustProxy` must be `config.trustedProxies` (serviceApp() sets it).
 */
async function eggmeshService(app: FastifyInstance, options: ServicePluginOptions): Promise<void> {
  const { config } = options;
  withServiceDefaults(app);
  const pages = options.pages ?? [];
  if (pages.length > 0) {
    app.addHook('onRoute', (route) => {
      if (pages.some((prefix) => route.url.startsWith(prefix))) {
        route.config = { ...route.config, page: true };
      }
    });
  }
  utf8JsonOnly(app);
  // helmet's middlewares are built once, here: @fastify/helmet builds them again on every request
  // (ADR 0004).
  const apiHeaders = helmet(helmetOptions);
  const pageHeaders = helmet(pageHelmetOptions);
  app.addHook('onRequest', (request, reply, done) => {
    const headers = request.routeOptions.config.page === true ? pageHeaders : apiHeaders;
    headers(request.raw, reply.raw, done as (error?: unknown) => void);
  });
  await app.register(cors, corsOptions(config));
  await app.register(underPressure, {
    maxEventLoopDelay: MAX_EVENT_LOOP_DELAY_MS,
    sampleInterval: OVERLOAD_SAMPLE_MS,
    // under-pressure sends what its handler returns, and lets the request on when it returns nothing
    // (its types say void for both).
    pressureHandler: ((request: FastifyRequest, reply: FastifyReply) => {
      if (late() < OVERLOAD_WINDOWS || ALWAYS_ANSWERED.has(pathOf(request.url))) return undefined;
      const error = new EggmeshError('EGGMESH_OVERLOADED', [OVERLOAD_RETRY_AFTER_S]);
      reply.code(error.statusCode).header('retry-after', String(OVERLOAD_RETRY_AFTER_S));
      return error.toBody();
    }) as (request: FastifyRequest, reply: FastifyReply) => void,
  });
  const late = lateWindows(app);
  const perMinute = config.rateLimitPerMin;
  if (perMinute > 0) {
    await app.register(rateLimit, {
      global: false,
      max: perMinute,
      timeWindow: RATE_LIMIT_WINDOW_MS,
      cache: RATE_LIMIT_CLIENTS,
    });
    const limit = app.createRateLimit();
    app.addHook('onRequest', async (request, reply) => {
      if (ALWAYS_ANSWERED.has(pathOf(request.url))) return;
      const seen = await limit(request);
      if (seen.isAllowed || !seen.isExceeded) return;
      const retryAfter = Math.max(1, seen.ttlInSeconds);
      const error = new EggmeshError('EGGMESH_RATE_LIMITED', [perMinute, retryAfter]);
      return reply.code(error.statusCode).header('retry-after', String(retryAfter)).send(error.toBody());
    });
  }
  installMetrics(app, { service: options.service, shared: options.metrics ?? createMetrics() });
}

/** The one plugin every service registers (see eggmeshService). */
export const servicePlugin = fp(eggmeshService, { fastify: '5.x', name: 'eggmesh-service' });
