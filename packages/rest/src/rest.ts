import { entityNames } from '@eggmesh/schema';
import { Authenticator, EggmeshError, type Metrics, type RestConfig } from '@eggmesh/service-kit';
import type { PrimaryStore, QueryReader } from '@eggmesh/store';
import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowedMethods, registerEntityRoutes } from './entity-routes.js';
import { ApiError } from './errors.js';
import { sharedSchemas } from './route-schemas.js';

export interface RestOptions {
  readonly config: RestConfig;
  /**
   * Where writes go. Without it only the REST reads (GET and HEAD of `/<entity>/api…`) are registered:
   * what the read-api answers itself on the public port (the route table sends the rest to the write-api).
   */
  readonly primary?: PrimaryStore;
  /** Reads every entity: actors and events from the primary or its replica, projections from theirs. */
  readonly reader: QueryReader;
  readonly metrics: Metrics;
  readonly clock?: () => number;
}

/** How long a client is asked to wait when storage is full (seconds): room rarely returns sooner. */
export const STORAGE_FULL_RETRY_S = 30;
/** A full disk fails every write: it is logged once a minute, not once per request. */
const STORAGE_FULL_LOG_MS = 60_000;

/**
 * Maps storage and framework failures onto the error table. `index` (the failing item) is kept for
 * bulk requests only: a single write is one operation, so the store's index 0 says nothing.
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
    if (error.code === storeErrorCodes.FULL)
      return new ApiError('EGGMESH_STORAGE_FULL', [STORAGE_FULL_RETRY_S]);
    // A list query the store cannot run as asked: a cursor of another query, or (FerretDB) a
    // comparison the server cannot evaluate; the message names which.
    if (error.code === storeErrorCodes.INVALID_QUERY)
      return new ApiError('EGGMESH_BAD_QUERY', [error.message]);
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

/** What a REST path no route matches answers: 405 with `Allow` for a known path, else 404. */
export function restNotFound(request: FastifyRequest, reply: FastifyReply): void {
  const path = request.url.split('?')[0] ?? '';
  const allowed = allowedMethods(path);
  const error = allowed
    ? new ApiError('EGGMESH_METHOD_NOT_ALLOWED', [request.method, path])
    : new ApiError('EGGMESH_ROUTE_NOT_FOUND', [request.method, path]);
  if (allowed) reply.header('allow', allowed.join(', '));
  reply.code(error.statusCode).send(error.toBody());
}

/**
 * What every REST route needs, on `app` itself (not in a scope of its own, so that @fastify/swagger
 * sees the shared schemas): the shared schemas, no request validation by Fastify (the handlers
 * validate, so errors keep the EGGMESH_* format), and the error handler that answers every failure in
 * the `{error, code}` shape. Call it before registering routes: a route keeps the error handler it
 * was registered with.
 */
export function prepareRest(app: FastifyInstance, config: RestConfig): void {
  app.setValidatorCompiler(() => () => true);
  for (const schema of sharedSchemas(entityNames, config.maxFutureMs)) app.addSchema(schema);
  let fullLoggedAt = Number.NEGATIVE_INFINITY;
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A request no route matches fails before the not-found handler when its body cannot be read
    // (QUERY without a content type…): the missing route is still the answer.
    if (request.is404) return restNotFound(request, reply);
    const bulk = request.routeOptions.url?.endsWith('/bulk') ?? false;
    const apiError = toApiError(error, request.routeOptions.bodyLimit ?? config.bodyLimitBytes, bulk);
    if (apiError.code === 'EGGMESH_INTERNAL') request.log.error({ err: error }, 'unhandled error');
    if (apiError.code === 'EGGMESH_STORAGE_FULL') {
      const now = Date.now();
      if (now - fullLoggedAt >= STORAGE_FULL_LOG_MS) {
        fullLoggedAt = now;
        request.log.error(
          { reason: error.message },
          'storage is full: writes answer 507 EGGMESH_STORAGE_FULL and /ready is not ready until one succeeds',
        );
      }
      reply.header('retry-after', String(STORAGE_FULL_RETRY_S));
    }
    reply.code(apiError.statusCode).send(apiError.toBody());
  });
}

/**
 * The REST routes of every entity (after prepareRest): the write-api registers them whole, with its
 * primary; the read-api registers the reads only, over its read store, in a scope of its own.
 */
export async function registerRest(app: FastifyInstance, options: RestOptions): Promise<void> {
  await registerEntityRoutes(app, {
    config: options.config,
    primary: options.primary,
    reader: options.reader,
    clock: options.clock ?? Date.now,
    auth: new Authenticator(options.config.auth),
    metrics: options.metrics,
  });
}
