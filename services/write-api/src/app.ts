import { readFileSync } from 'node:fs';
import { METHODS } from 'node:http';
import { ApiError, prepareRest, registerRest, restNotFound, STORAGE_FULL_RETRY_S } from '@eggmesh/rest';
import {
  type ConfigOf,
  createMetrics,
  healthResponseSchema,
  maxHeaderBytes,
  serviceApp,
  servicePlugin,
} from '@eggmesh/service-kit';
import { isStoreError, type PrimaryStore, type QueryReader, storeErrorCodes } from '@eggmesh/store';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

export interface WriteApiOptions {
  readonly config: ConfigOf<'write-api'>;
  /** Where writes go. */
  readonly primary: PrimaryStore;
  readonly reader: QueryReader;
  readonly clock?: () => number;
  readonly logger?: FastifyServerOptions['logger'];
}

const version = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Builds the write service; it never listens (server.ts does). */
export async function buildApp(options: WriteApiOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = serviceApp(config, {
    logger: options.logger ?? false,
    // Our own ids are UUIDs; keep Fastify's request ids short and unique per process.
    requestIdHeader: 'x-request-id',
    http: { maxHeaderSize: maxHeaderBytes(config) },
  });
  // Every method Node parses reaches the router, so an unexpected one (QUERY, PROPFIND…) on a known
  // path is our 405 with an Allow header rather than Fastify's 400.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method))
      app.addHttpMethod(method, { hasBody: true });
  }
  const metrics = createMetrics();
  await app.register(servicePlugin, { config, service: 'write-api', metrics, pages: ['/docs'] });
  // Bodies are JSON only: without this, text/plain bodies would reach validation as strings (400, not 415).
  app.removeContentTypeParser('text/plain');
  prepareRest(app, config);
  app.setNotFoundHandler(restNotFound);
  await documentAndProbe(app, options.primary);
  await registerRest(app, {
    config,
    primary: options.primary,
    reader: options.reader,
    metrics,
    ...(options.clock ? { clock: options.clock } : {}),
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
    response: { 200: status('ready'), ...always, 503: { $ref: 'Error#' }, 507: { $ref: 'Error#' } },
  };
  app.get('/ready', { schema: readySchema }, async (_request, reply) => {
    try {
      await primary.ping();
      return { status: 'ready' };
    } catch (error) {
      if (isStoreError(error, storeErrorCodes.FULL)) {
        reply.code(507).header('retry-after', String(STORAGE_FULL_RETRY_S));
        return new ApiError('EGGMESH_STORAGE_FULL', [STORAGE_FULL_RETRY_S]).toBody();
      }
      reply.code(503);
      return new ApiError('EGGMESH_UNAVAILABLE', [], { cause: String(error) }).toBody();
    }
  });
}
