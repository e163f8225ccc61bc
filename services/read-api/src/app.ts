import { METHODS } from 'node:http';
import { entityNames } from '@eggmesh/schema';
import {
  Authenticator,
  answerClientError,
  type Config,
  loggerOptions,
  type Metrics,
  requestLogging,
  servicePlugin,
} from '@eggmesh/service-kit';
import Fastify, { type FastifyInstance } from 'fastify';
import { httpErrors } from './errors.js';
import { graphqlEndpoint, type ReadStore } from './graphql/endpoint.js';
import { GRAPHIQL_ASSETS, registerGraphiql } from './http/graphiql.js';
import { entityResolvers, unifiedResolvers } from './schema/resolvers.js';
import { entitySdl, unifiedSdl } from './schema/sdl.js';

export interface BuildAppOptions {
  readonly config: Config;
  readonly store: ReadStore;
  /** The process's metrics when it serves other apps too (the edge); else the app has its own. */
  readonly metrics?: Metrics;
  /** Epoch ms; the reference time of projection windows when a query has no `at`. */
  readonly clock?: () => number;
}

const graphPaths = new Set(['/graphql', ...entityNames.map((entity) => `/${entity}/graph`)]);

/** The methods a known path answers (for 405s); undefined for an unknown path. */
function allowedMethods(path: string): readonly string[] | undefined {
  if (graphPaths.has(path)) return ['GET', 'HEAD', 'POST', 'OPTIONS'];
  if (path === '/health' || path === '/ready' || path === '/graphiql') return ['GET', 'HEAD'];
  if (path.startsWith(`${GRAPHIQL_ASSETS}/`)) return ['GET', 'HEAD'];
  return undefined;
}

/**
 * The read API: `POST|GET /<entity>/graph` for the 13 entities (MeshQL's queries), the unified
 * `POST|GET /graphql` with GraphiQL at `/graphiql`, `/health` and `/ready`. Never listens.
 */
export function buildApp({ config, store, metrics, clock = Date.now }: BuildAppOptions): FastifyInstance {
  const app = Fastify({
    logger: loggerOptions(config, 'read-api'),
    logController: requestLogging(config.logRequests),
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    // x-forwarded-for is believed from the configured proxies only (EGGMESH_TRUSTED_PROXIES).
    trustProxy: [...config.trustedProxies],
    clientErrorHandler: answerClientError,
  });
  app.register(servicePlugin, { config, service: 'read-api', metrics, pages: ['/graphiql'] });
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

  for (const entity of entityNames) {
    app.register(async (scope) =>
      graphqlEndpoint(scope, {
        path: `/${entity}/graph`,
        schema: entitySdl(entity, config.list),
        resolvers: entityResolvers(entity),
        auth,
        wholeLists: true,
        store,
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
      clock,
      config,
    }),
  );
  // Declared once the service plugin has loaded, so the page gets its Content-Security-Policy.
  app.register(async (scope) => registerGraphiql(scope, '/graphql'));
  return app;
}
