import type { FastifyInstance } from 'fastify';
import type { HelmetOptions } from 'helmet';
import type { Config } from './config.js';
import { EggmeshError } from './errors.js';

/**
 * The Content-Security-Policy of every answer that is not a page (JSON, metrics, the Markdown guide):
 * nothing may load, nothing may frame it. A browser never renders these as documents, so the strictest
 * policy costs nothing.
 */
export const API_CSP = Object.freeze({
  'default-src': ["'none'"],
  'frame-ancestors': ["'none'"],
});

/**
 * The Content-Security-Policy of the HTML pages (GraphiQL at /graphiql, Swagger UI at /docs): scripts,
 * styles, fonts and images from their own server only; inline styles are allowed (both UIs set style
 * attributes), inline scripts are not; data: for the icons and fonts both inline.
 */
export const PAGE_CSP = Object.freeze({
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
});

/**
 * helmet's options for the HTML pages: helmet's defaults (no-referrer, same-origin opener and resource
 * policies, …) with PAGE_CSP and framing denied outright. No Strict-Transport-Security: the services
 * speak plain HTTP behind whatever terminates TLS, and that proxy owns the HSTS policy of its hostname
 * (includeSubDomains from here could lock out its siblings).
 */
export const pageHelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: PAGE_CSP },
  xFrameOptions: { action: 'deny' },
  strictTransportSecurity: false,
} as const satisfies HelmetOptions;

/**
 * helmet's options for every answer that is not a page (JSON, metrics, the Markdown guide): the headers
 * that protect a response that is not a document, after OWASP's REST Security Cheat Sheet. The API
 * policy above (nothing loads, nothing frames), `nosniff` (no answer is run as a script or styled
 * as CSS), `x-frame-options: DENY` for browsers without `frame-ancestors`, and
 * `cross-origin-resource-policy: same-origin` (no page of another origin embeds an answer in no-cors
 * mode; CORS reads are governed by CORS). The headers that only steer a document (opener and agent
 * cluster, referrer, DNS prefetch, downloads, cross-domain policy files, the old XSS filter) are the
 * pages' alone: the API policy already forbids everything they refine, and each costs every answer
 * its bytes (ADR 0006).
 */
export const helmetOptions = {
  ...pageHelmetOptions,
  contentSecurityPolicy: { useDefaults: false, directives: API_CSP },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
} as const satisfies HelmetOptions;

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

/**
 * The @fastify/cors options of every service (origins from `EGGMESH_CORS_ORIGIN`). With none (the
 * default) answers carry no CORS header and preflights are not answered (404 or 405), so a page from another
 * origin can neither read an answer nor send a write that needs a preflight.
 */
export function corsOptions(config: Pick<Config, 'corsOrigin'>) {
  const origin = config.corsOrigin;
  return {
    origin: typeof origin === 'object' ? [...origin] : origin,
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // Browsers cap this (Chromium at 2 h); 10 min spares most preflights without pinning a policy long.
    maxAge: 600,
  };
}

/**
 * What a service says at start about who may write: with `EGGMESH_AUTH=none` anyone who reaches the
 * port, and with `EGGMESH_CORS_ORIGIN=*` as well any web page open in a browser on a machine that
 * reaches it.
 */
export function openAccessWarnings(config: Pick<Config, 'auth' | 'corsOrigin'>): string[] {
  if (config.auth.mode !== 'none') return [];
  const warnings = [
    'writes are unauthenticated (EGGMESH_AUTH=none): anyone who can reach this port can write',
  ];
  if (config.corsOrigin === '*')
    warnings.push(
      'EGGMESH_CORS_ORIGIN=* with EGGMESH_AUTH=none: any web page a browser on a machine that reaches this port opens can write',
    );
  return warnings;
}

/** The charset a `content-type` names, in lower case; undefined when it names none. */
const charsetOf = (contentType: string | undefined): string | undefined =>
  /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? '')?.[1]?.toLowerCase();

/**
 * Fastify's own JSON body parser, refusing a body declared in a charset other than UTF-8 (415
 * EGGMESH_UNSUPPORTED_MEDIA_TYPE): JSON is UTF-8 (RFC 8259), and decoding latin1 or UTF-16 bytes as
 * UTF-8 would store U+FFFD in place of what the client sent.
 */
export function utf8JsonOnly(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset === undefined || charset === 'utf-8' || charset === 'utf8') {
      parse(request, body as string, done);
      return;
    }
    done(
      new EggmeshError(
        'EGGMESH_UNSUPPORTED_MEDIA_TYPE',
        [],
        {},
        `send the body as application/json in UTF-8 (charset=${charset} is not accepted)`,
      ),
      undefined,
    );
  });
}
