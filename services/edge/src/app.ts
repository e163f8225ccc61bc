import {
  createServer,
  type IncomingMessage,
  METHODS,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Config, installMetrics, type Metrics, serviceApp } from '@eggmesh/service-kit';
import type { FastifyError, FastifyInstance, FastifyServerOptions } from 'fastify';
import { EdgeError } from './errors.js';
import { apiGuideText, landingPage } from './landing.js';
import { Forwarder, targetOf, tooLarge, writeError } from './proxy.js';
import { isRestRead, type Upstream, upstreamFor } from './routes.js';
import { Splicer } from './splice.js';

export interface EdgeOptions {
  readonly config: Config;
  readonly logger?: FastifyServerOptions['logger'];
  /**
   * Answers the read-api's paths in this process (the read-api's own app, see server.ts) instead of
   * forwarding them; REST writes are always forwarded to the write-api.
   */
  readonly read?: (request: IncomingMessage, response: ServerResponse) => void;
  /**
   * Answers the REST reads (GET and HEAD of `/<entity>/api…`) in this process: the write-api's own
   * read routes over this process's replica (see server.ts). Writes are always forwarded.
   */
  readonly restReads?: (request: IncomingMessage, response: ServerResponse) => void;
  /**
   * The process's metrics, given to the apps that answer in process too (see server.ts): they count
   * their own answers, by route; the edge counts what it forwards.
   */
  readonly metrics?: Metrics;
  /**
   * Called after the edge passed on the write-api's answer to a forwarded request (see server.ts: the
   * in-process read side catches up then, not in the next read's time).
   */
  readonly wrote?: () => void;
}

/** What sendError needs of a reply. */
interface Replier {
  header(name: string, value: string): unknown;
  code(status: number): { send(body: unknown): unknown };
}

function sendError(reply: Replier, error: EdgeError): void {
  // The rest of a refused upload would otherwise have to be read before the connection can be reused.
  if (error.statusCode === 413) reply.header('connection', 'close');
  reply.code(error.statusCode).send(error.toBody());
}

/** The CORS headers the services send (@fastify/cors with EGGMESH_CORS_ORIGIN), for the edge's own answers. */
export function corsHeaders(corsOrigin: string): (origin: string | undefined) => OutgoingHttpHeaders {
  if (corsOrigin === '*') {
    const any = { 'access-control-allow-origin': '*' };
    return () => any;
  }
  const allowed = new Set(corsOrigin.split(',').map((o) => o.trim()));
  return (origin) =>
    origin !== undefined && allowed.has(origin)
      ? { 'access-control-allow-origin': origin, vary: 'Origin' }
      : { vary: 'Origin' };
}

/** The path of a request URL (without the query). */
const pathOf = (url: string | undefined): string => {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

/**
 * One front door for MeshQL-style clients: `/<entity>/api` (and the REST docs) to the write-api,
 * `/<entity>/graph`, `/graphql` and `/graphiql` to the read-api; given the read side (`read`,
 * `restReads`), the GraphQL paths and the REST reads are answered in process. Forwarded requests never
 * enter Fastify: a plain one is passed on as bytes by the splice (splice.ts), any other by a lean
 * `node:http` proxy (proxy.ts). Fastify only answers what the edge answers itself: `/`, `/health`,
 * `/ready`, unknown routes, malformed requests. It answers 4xx for what the
 * client got wrong (malformed request, body too large, upload abandoned) and 502/504 only for a service
 * that did not answer; its error bodies name the service, never its address (the log has that).
 */
export async function buildApp(options: EdgeOptions): Promise<FastifyInstance> {
  const { config, read, restReads } = options;
  /** The in-process handler that answers a routed request, if any (else it is forwarded). */
  const servedHere = (method: string | undefined, path: string, upstream: Upstream) =>
    upstream === 'read' && read ? read : restReads && isRestRead(method, path) ? restReads : undefined;
  /**
   * Answers a request for a service's path: in process when this process serves it (that app counts
   * the answer, by its route), else forwarded, counted as `/*` into `counted` when given (the HTTP
   * server's path; under inject() Fastify's own hook on the edge's `/*` route counts it).
   */
  const route = (
    request: IncomingMessage,
    response: ServerResponse,
    upstream: Upstream,
    path: string,
    counted?: Metrics,
  ): void => {
    const here = servedHere(request.method, path, upstream);
    if (here) {
      here(request, response);
      return;
    }
    if (counted) {
      const started = performance.now();
      response.once('finish', () =>
        counted.observeRequest(
          '/*',
          request.method ?? 'GET',
          response.statusCode,
          (performance.now() - started) / 1000,
        ),
      );
    }
    proxy.handle(request, response, upstream);
  };
  const ownHeaders = corsHeaders(config.corsOrigin);
  let app: FastifyInstance | undefined;
  let metrics: Metrics | undefined;
  let splicer: Splicer | undefined;
  const proxyLog = () => {
    if (!app) throw new Error('edge: no app yet');
    return app.log;
  };
  const proxy = new Forwarder({
    upstreams: config.upstreams,
    bodyLimitBytes: config.bodyLimitBytes,
    timeoutMs: config.http.requestTimeoutMs,
    logRequests: config.logRequests,
    log: proxyLog,
    ownHeaders,
  });
  app = serviceApp(config, {
    logger: options.logger ?? false,
    // The data path: connections are read by the splice first (splice.ts), which passes plain requests
    // bound for a service on as bytes; what it hands to node:http goes to the proxy or the in-process read
    // side before Fastify sees it.
    serverFactory: (handler) => {
      const onRequest = (request: IncomingMessage, response: ServerResponse): void => {
        const path = pathOf(request.url);
        const upstream = request.method === 'CONNECT' ? null : upstreamFor(path);
        if (upstream) route(request, response, upstream, path, metrics);
        else handler(request, response);
      };
      const server = createServer(onRequest);
      const [serveHttp] = server.listeners('connection') as ((connection: Duplex) => void)[];
      if (!serveHttp) throw new Error('edge: node:http has no connection listener');
      server.removeListener('connection', serveHttp);
      splicer = new Splicer({
        route: (method, path) => {
          const upstream = upstreamFor(path);
          return upstream && !servedHere(method, path, upstream) ? upstream : undefined;
        },
        upstreams: { write: targetOf(config.upstreams.write), read: targetOf(config.upstreams.read) },
        bodyLimitBytes: config.bodyLimitBytes,
        timeoutMs: config.http.requestTimeoutMs,
        keepAliveTimeoutMs: config.http.keepAliveTimeoutMs,
        http: (connection) => serveHttp.call(server, connection),
        serve: onRequest,
        answered: (method, status, seconds) => metrics?.observeRequest('/*', method, status, seconds),
        ...(options.wrote ? { wrote: options.wrote } : {}),
        log: proxyLog,
        logRequests: config.logRequests,
        ownHeaders,
      });
      const accepting = splicer;
      server.on('connection', (socket: Socket) => accepting.accept(socket));
      return server;
    },
    // Requests Fastify refuses before routing (a malformed URL): 400 in the edge's own shape.
    frameworkErrors: (error, request, reply) => {
      writeError(
        reply.raw,
        new EdgeError('EGGMESH_BAD_REQUEST', `bad request: ${error.message}`),
        ownHeaders(request.headers.origin),
      );
    },
  });
  metrics = installMetrics(app, { service: 'edge', shared: options.metrics });
  app.addHook('onClose', async () => proxy.close());
  // Connections the splice holds are not node:http's to close: idle ones close now, busy ones after their answer.
  app.addHook('preClose', (done) => {
    splicer?.drain();
    done();
  });
  // Every method Node parses reaches the routes, so an unexpected one (PROPFIND…) on a service's path
  // gets that service's own 405 and Allow header.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method))
      app.addHttpMethod(method, { hasBody: true });
  }
  // Requests that reach Fastify on a forwarded path (inject() in tests skips the HTTP server): the same proxy.
  app.addHook('onRequest', (request, reply, done) => {
    const path = pathOf(request.url);
    const upstream = upstreamFor(path);
    if (!upstream) {
      done();
      return;
    }
    reply.hijack();
    route(request.raw, reply.raw, upstream, path);
  });
  // The edge's own answers carry the CORS headers the services send.
  app.addHook('onSend', async (request, reply, payload) => {
    for (const [name, value] of Object.entries(ownHeaders(request.headers.origin)))
      if (value !== undefined) reply.header(name, value);
    return payload;
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    const length = request.headers['content-length'];
    if (length !== undefined && Number(length) > config.bodyLimitBytes) {
      done(tooLarge(config.bodyLimitBytes), undefined);
      return;
    }
    payload.resume();
    payload.on('end', () => done(null, undefined));
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof EdgeError) return sendError(reply, error);
    const status = error.statusCode ?? 500;
    if (status === 413) return sendError(reply, tooLarge(config.bodyLimitBytes));
    if (status >= 400 && status < 500) {
      return sendError(reply, new EdgeError('EGGMESH_BAD_REQUEST', `bad request: ${error.message}`));
    }
    request.log.error({ err: error }, 'request failed');
    return sendError(reply, new EdgeError('EGGMESH_INTERNAL'));
  });

  app.get('/', async (_request, reply) => reply.type('text/html; charset=utf-8').send(landingPage()));
  app.get('/api.md', async (request, reply) => {
    const text = apiGuideText();
    if (text === null)
      return sendError(
        reply,
        new EdgeError('EGGMESH_ROUTE_NOT_FOUND', `no route GET ${pathOf(request.url)}`),
      );
    return reply.type('text/markdown; charset=utf-8').send(text);
  });
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    const check = async (url: string) => {
      try {
        const response = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(2000) });
        return response.ok;
      } catch {
        return false;
      }
    };
    const [write, read] = await Promise.all([check(config.upstreams.write), check(config.upstreams.read)]);
    if (!write || !read) reply.code(503);
    return { status: write && read ? 'ready' : 'unavailable', write, read };
  });

  app.all('/*', async (request, reply) =>
    sendError(
      reply,
      new EdgeError('EGGMESH_ROUTE_NOT_FOUND', `no route ${request.method} ${pathOf(request.url)}`),
    ),
  );
  return app;
}
