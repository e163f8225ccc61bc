import { readFileSync } from 'node:fs';
import { METHODS } from 'node:http';
import { entityNames } from '@eggmesh/schema';
import {
  Authenticator,
  type Config,
  createMetrics,
  EggmeshError,
  healthResponseSchema,
  type Metrics,
  serviceApp,
  servicePlugin,
} from '@eggmesh/service-kit';
import type { EntityReader, PrimaryStore } from '@eggmesh/store';
import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from 'fastify';
import { ApiError } from './errors.js';
import { sharedSchemas } from './route-schemas.js';
import { allowedMethods, registerEntityRoutes } from './routes/entities.js';

export interface WriteApiOptions {
  readonly config: Config;
  /**
   * Where writes go. Without it the app answers the REST reads only (GET and HEAD of
   * `/<entity>/api…`, through the same routes, errors and hooks) and has no docs and no `/ready`:
   * what a read process serves in place of forwarding them (the edge on SQLite, see services/edge).
   */
  readonly primary?: PrimaryStore;
  readonly reader: EntityReader;
  readonly clock?: () => number;
  readonly logger?: FastifyServerOptions['logger'];
  /** The process's metrics when it serves other apps too (the edge); else the app has its own. */
  readonly metrics?: Metrics;
}

const version = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * Maps storage and framework failures onto the error catalogue. `index` (the failing item) is kept
 * for bulk requests only: a single write is one operation, so the store's index 0 says nothing.
 */
function toApiError(error: FastifyError | Error, bodyLimit: number, bulk: boolean): EggmeshError {
  if (error instanceof EggmeshError) return error;
  if (isStoreError(error)) {
    const at = error.index === undefined || !bulk ? {} : { index: error.index };
    if (error.code === storeErrorCodes.ALREADY_EXISTS) {
      return new ApiError('EGGMESH_ALREADY_EXISTS', [error.entity ?? '', error.id ?? ''], at);
    }
    if (error.code === storeErrorCodes.NOT_FOUND) {
      return new ApiError('EGGMESH_NOT_FOUND', [error.entity ?? '', error.id ?? ''], at);
    }
    // Storage unreachable (the scaled tier's MongoDB is down): nothing was acknowledged; retry later.
    if (error.code === storeErrorCodes.UNAVAILABLE) return new ApiError('EGGMESH_UNAVAILABLE');
  }
  const code = (error as FastifyError).code;
  switch (code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('EGGMESH_BAD_JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('EGGMESH_BODY_TOO_LARGE', [bodyLimit]);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('EGGMESH_UNSUPPORTED_MEDIA_TYPE');
  }
  if ((error as FastifyError).statusCode === 400 && error instanceof SyntaxError)
    return new ApiError('EGGMESH_BAD_JSON');
  if ((error as FastifyError).statusCode === 400) return new ApiError('EGGMESH_BAD_QUERY', [error.message]);
  return new ApiError('EGGMESH_INTERNAL');
}

/** Builds the write service; it never listens (server.ts does). */
export async function buildApp(options: WriteApiOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = serviceApp(config, {
    logger: options.logger ?? false,
    // Our own ids are UUIDs; keep Fastify's request ids short and unique per process.
    requestIdHeader: 'x-request-id',
    // Room in the request line for a bulk GET of bulkMaxItems UUIDs (37 bytes each) plus ordinary
    // headers; Node's default (16 KiB) would answer 431 past ~430 ids.
    http: { maxHeaderSize: Math.max(16_384, config.bulkMaxItems * 37 + 8_192) },
  });
  // Every method Node parses reaches the router, so an unexpected one (QUERY, PROPFIND…) on a known
  // path is our 405 with an Allow header rather than Fastify's 400.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method))
      app.addHttpMethod(method, { hasBody: true });
  }
  // Route schemas document the contract and serialize responses; the handlers validate requests
  // themselves (zod for bodies), so errors keep the EGGMESH_* format.
  app.setValidatorCompiler(() => () => true);
  for (const schema of sharedSchemas(entityNames, config.maxFutureMs)) app.addSchema(schema);
  const metrics = options.metrics ?? createMetrics();
  await app.register(servicePlugin, { config, service: 'write-api', metrics, pages: ['/docs'] });
  // Bodies are JSON only: without this, text/plain bodies would reach validation as strings (400, not 415).
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A request no route matches fails before the not-found handler when its body cannot be read
    // (QUERY without a content type…): the missing route is still the answer.
    if (request.is404) return notFound(request, reply);
    const bulk = request.routeOptions.url?.endsWith('/bulk') ?? false;
    const apiError = toApiError(error, request.routeOptions.bodyLimit ?? config.bodyLimitBytes, bulk);
    if (apiError.code === 'EGGMESH_INTERNAL') request.log.error({ err: error }, 'unhandled error');
    reply.code(apiError.statusCode).send(apiError.toBody());
  });
  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = allowedMethods(path);
    const error = allowed
      ? new ApiError('EGGMESH_METHOD_NOT_ALLOWED', [request.method, path])
      : new ApiError('EGGMESH_ROUTE_NOT_FOUND', [request.method, path]);
    if (allowed) reply.header('allow', allowed.join(', '));
    reply.code(error.statusCode).send(error.toBody());
  };
  app.setNotFoundHandler(notFound);

  const { primary } = options;
  if (primary) await documentAndProbe(app, primary);

  await registerEntityRoutes(app, {
    config,
    primary,
    reader: options.reader,
    clock: options.clock ?? Date.now,
    auth: new Authenticator(config.auth),
    metrics,
  });
  return app;
}

/** The OpenAPI document and its UI, `/health` and `/ready`: what only the write process serves. */
async function documentAndProbe(app: FastifyInstance, primary: PrimaryStore): Promise<void> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
  ]);
  await app.register(swagger, {
    mode: 'dynamic',
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'eggmesh write API',
        version,
        description:
          'REST writes (and read-your-writes reads) for the egg economy. Errors carry a stable `code`. ' +
          'Generated from the route definitions.',
      },
    },
    // Shared schemas become components named by their $id (Farm, FarmInput, Error…).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  const status = (value: string) => ({
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', enum: [value] } },
  });
  const always = { 400: { $ref: 'Error#' }, 431: { $ref: 'Error#' }, 500: { $ref: 'Error#' } };
  app.get(
    '/health',
    { schema: { summary: 'The process is up', response: { 200: healthResponseSchema, ...always } } },
    async () => ({ status: 'ok' }),
  );
  const readySchema = {
    summary: 'Storage answers',
    response: { 200: status('ready'), ...always, 503: { $ref: 'Error#' } },
  };
  app.get('/ready', { schema: readySchema }, async (_request, reply) => {
    try {
      await primary.ping();
      return { status: 'ready' };
    } catch (error) {
      reply.code(503);
      return new ApiError('EGGMESH_UNAVAILABLE', [], { cause: String(error) }).toBody();
    }
  });
}
