import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from './config.js';
import { EggmeshError } from './errors.js';

/**
 * The Content-Security-Policy of every response. The HTML pages (GraphiQL at /graphiql, Swagger UI at
 * /docs) load scripts, styles, fonts and images from their own server only; inline styles are allowed
 * (both UIs set style attributes), inline scripts are not. On JSON it costs nothing and means nothing.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers every response of every service carries (one frozen object, set by one hook). */
export const SECURITY_HEADERS = Object.freeze({
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'content-security-policy': CONTENT_SECURITY_POLICY,
});

/** Sets SECURITY_HEADERS on every response of the app, its 404s and errors included. */
export function securityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    done();
  });
}

/** What a browser app may send and read, on every method a route of ours answers. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'QUERY'];
export const CORS_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'x-min-position',
  'x-request-id',
];
export const CORS_EXPOSED_HEADERS = [
  'x-log-position',
  'x-next-cursor',
  'x-request-id',
  'x-eggmesh-stale',
  'server-timing',
  'retry-after',
  'www-authenticate',
  'allow',
  'location',
];

/** The @fastify/cors options of every service (origins from `EGGMESH_CORS_ORIGIN`). */
export function corsOptions(config: Config) {
  const origin = config.corsOrigin.trim();
  return {
    origin: origin === '*' ? '*' : origin.split(',').map((o) => o.trim()),
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // Browsers cap this (Chromium at 2 h); 10 min spares most preflights without pinning a policy long.
    maxAge: 600,
  };
}

/** Paths a rate limit never counts: the supervisor's probes and metric scrapes must always answer. */
const UNLIMITED = new Set(['/health', '/ready', '/metrics']);
/** Most client addresses tracked in one window; past it new addresses go uncounted until the next. */
const MAX_TRACKED = 100_000;
const WINDOW_MS = 60_000;

/**
 * Answers 429 `EGGMESH_RATE_LIMITED` (with `retry-after`, seconds) to a client address that made more
 * than `perMinute` requests in the current minute (fixed windows, one counter per address). Nothing is
 * installed when `perMinute` is 0.
 */
export function rateLimit(app: FastifyInstance, perMinute: number, clock: () => number = Date.now): void {
  if (perMinute <= 0) return;
  const counts = new Map<string, number>();
  let window = Math.floor(clock() / WINDOW_MS);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    const q = request.url.indexOf('?');
    if (UNLIMITED.has(q === -1 ? request.url : request.url.slice(0, q))) return done();
    const now = clock();
    const current = Math.floor(now / WINDOW_MS);
    if (current !== window) {
      window = current;
      counts.clear();
    }
    const key = request.ip;
    const seen = counts.get(key);
    if (seen === undefined) {
      if (counts.size < MAX_TRACKED) counts.set(key, 1);
      return done();
    }
    if (seen < perMinute) {
      counts.set(key, seen + 1);
      return done();
    }
    const retryAfter = Math.max(1, Math.ceil(((current + 1) * WINDOW_MS - now) / 1000));
    const error = new EggmeshError('EGGMESH_RATE_LIMITED', [perMinute, retryAfter]);
    reply.code(error.statusCode).header('retry-after', String(retryAfter)).send(error.toBody());
  });
}
