import { METHODS } from 'node:http';
import { prepareRest, registerRest, restNotFound } from '@eggmesh/rest';
import { entityNames } from '@eggmesh/schema';
import {
  Authenticator,
  answerClientError,
  type ConfigOf,
  createMetrics,
  loggerOptions,
  maxHeaderBytes,
  requestLogging,
  servicePlugin,
} from '@eggmesh/service-kit';
import type { QueryReader } from '@eggmesh/store';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { httpErrors } from './errors.js';
import { graphqlEndpoint, type ReadStore } from './graphql/endpoint.js';
import { APPS, registerApps } from './http/apps.js';
import { forwardWrites } from './http/forward.js';
import { GRAPHIQL_ASSETS, registerGraphiql } from './http/graphiql.js';
import { apiGuideText, landingPage } from './http/landing.js';
import { boundPipelining } from './http/pipelining.js';
import { entityResolvers, unifiedResolvers } from './schema/resolvers.js';
import { entitySdl, unifiedSdl } from './schema/sdl.js';

export interface BuildAppOptions {
  readonly config: ConfigOf<'read-api'>;
  readonly store: ReadStore;
  /**
   * What the REST reads read (GET and HEAD of `/<entity>/api…`); defaults to `store`. On MongoDB the
   * server gives a reader of the primary, so that a client reads its own REST writes at once.
   */
  readonly restReader?: QueryReader;
  /**
   * A reader of the primary where `store` reads copies that may lag it (MongoDB secondaries): GraphQL
   * reads whose `x-min-position` the replica has not reached in time are served from it.
   */
  readonly primary?: ReadStore;
  /** Where the log goes; defaults to the service's JSON lines on stdout (loggerOptions). */
  readonly logger?: FastifyServerOptions['logger'];
  /** Epoch ms; the reference time of projection windows when a query has no `at`. */
  readonly clock?: () => number;
}

const graphPaths = new Set(['/graphql', ...entityNames.map((entity) => `/${entity}/graph`)]);
const restPath = /^\/[a-z_]+\/api(\/|$)/;

/** The methods a known path answers (for 405s); undefined for an unknown path. */
function allowedMethods(path: string): readonly string[] | undefined {
  if (graphPaths.has(path)) return ['GET', 'HEAD', 'POST', 'OPTIONS'];
  if (path === '/' || path === '/api.md') return ['GET', 'HEAD'];
  if (path === '/health' || path === '/ready' || path === '/graphiql') return ['GET', 'HEAD'];
  if (path.startsWith(`${GRAPHIQL_ASSETS}/`)) return ['GET', 'HEAD'];
  return undefined;
}

/**
 * The public port: GraphQL (`POST|GET /<entity>/graph` for the 13 entities, MeshQL's queries, and the
 * unified `POST|GET /graphql` with GraphiQL at `/graphiql`) and the REST reads, answered in this
 * process over its read store; the landing page, `/health`, `/ready` and `/metrics`; and the write
 * routes of the route table (`@eggmesh/rest`) forwarded to the write-api. Never listens.
 */
export function buildApp({
  config,
  store,
  restReader = store,
  primary,
  logger = loggerOptions(config, 'read-api'),
  clock = Date.now,
}: BuildAppOptions): FastifyInstance {
  const app = Fastify({
    logger,
    logController: requestLogging(config.logRequests),
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    // x-forwarded-for is believed from the configured proxies only (EGGMESH_TRUSTED_PROXIES).
    trustProxy: [...config.trustedProxies],
    clientErrorHandler: answerClientError,
    // The write-api's limit: a forwarded write gets the answer it would get there.
    http: { maxHeaderSize: maxHeaderBytes(config) },
  });
  boundPipelining(app);
  const metrics = createMetrics();
  app.register(servicePlugin, {
    config,
    service: 'read-api',
    metrics,
    pages: ['/graphiql', ...APPS.map((a) => a.prefix)],
  });
  const auth = new Authenticator(config.auth);

  // The GraphQL scopes format their own errors; these cover the plain routes.
  // Every method Node parses reaches the router, so an unexpected one (QUERY, PROPFIND…) on a known
  // path is a 405 with an Allow header rather than Fastify's 400 or a 404.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method))
      app.addHttpMethod(method, { hasBody: true });
  }
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    // A REST read no route matches answers as the write-api would (405 with Allow, or 404).
    if (restPath.test(path)) return restNotFound(request, reply);
    const allow = allowedMethods(path);
    if (allow) {
      const { code, status } = httpErrors.METHOD_NOT_ALLOWED;
      reply.header('allow', allow.join(', '));
      reply.code(status).send({ error: `${request.method} is not allowed on ${path}`, code });
      return;
    }
    const { code, status } = httpErrors.ROUTE_NOT_FOUND;
    reply.code(status).send({ error: `no route ${request.method} ${path}`, code });
  });
  app.setErrorHandler((error, request, reply) => {
    request.log.error({ err: error }, 'request failed');
    const { code, status } = httpErrors.INTERNAL;
    reply.code(status).send({ error: 'internal error', code });
  });

  app.get('/', async (_request, reply) => reply.type('text/html; charset=utf-8').send(landingPage()));
  app.get('/api.md', async (request, reply) => {
    const text = apiGuideText();
    if (text === null) {
      const { code, status } = httpErrors.ROUTE_NOT_FOUND;
      return reply.code(status).send({ error: `no route GET ${request.url.split('?')[0]}`, code });
    }
    return reply.type('text/markdown; charset=utf-8').send(text);
  });
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (request, reply) => {
    try {
      const [replica, projections] = await Promise.all([store.replicaPosition(), store.projectionPosition()]);
      return { status: 'ready', replica, projections };
    } catch (error) {
      request.log.warn({ err: error }, 'read store not ready');
      const { code, status } = httpErrors.UNAVAILABLE;
      return reply.code(status).send({ status: 'unavailable', code, error: (error as Error).message });
    }
  });

  // The REST reads, with the write-api's own routes, errors and auth, over the read store; in a scope
  // of their own, so that their error handler answers theirs only.
  app.register(async (scope) => {
    prepareRest(scope, config);
    await registerRest(scope, { config, reader: restReader, metrics, clock });
  });
  forwardWrites(app, config);

  for (const entity of entityNames) {
    app.register(async (scope) =>
      graphqlEndpoint(scope, {
        path: `/${entity}/graph`,
        schema: entitySdl(entity, config.list),
        resolvers: entityResolvers(entity),
        auth,
        wholeLists: true,
        store,
        ...(primary ? { primary } : {}),
        clock,
        config,
      }),
    );
  }
  app.register(async (scope) =>
    graphqlEndpoint(scope, {
      path: '/graphql',
      schema: unifiedSdl(config.list, config.graphql),
      resolvers: unifiedResolvers(),
      auth,
      store,
      ...(primary ? { primary } : {}),
      clock,
      config,
      subscriptions: true,
    }),
  );
  // Declared once the service plugin has loaded, so the page gets its Content-Security-Policy.
  app.register(async (scope) => registerGraphiql(scope, '/graphql'));
  app.register(registerApps);
  return app;
}
