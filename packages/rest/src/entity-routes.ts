import { materialize, type projectionNames } from '@eggmesh/projections';
import { type EntityDefinition, type EntityName, entities, entityNames } from '@eggmesh/schema';
import type { Access, Authenticator, Metrics, RestConfig } from '@eggmesh/service-kit';
import type { PrimaryStore, QueryReader, StoredRecord, WriteOperation } from '@eggmesh/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError, type Issue } from './errors.js';
import { idGenerator } from './ids.js';
import { parseSort, parseWhere } from './list-query.js';
import { INTEGER_QUERY, NUMBER_QUERY, type ReadRouteSchema, routeSchemas } from './route-schemas.js';

declare module 'fastify' {
  interface FastifySchema {
    /** Left out of the OpenAPI document (@fastify/swagger, on the write-api, reads it). */
    hide?: boolean;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface EntityRouteOptions {
  readonly config: RestConfig;
  /** Absent: only the read routes (GET, HEAD) are registered; `POST …/bulk/read` goes with the writes. */
  readonly primary: PrimaryStore | undefined;
  /** Reads every entity: the primary for actors and events, the projection store for projections. */
  readonly reader: QueryReader;
  readonly clock: () => number;
  /** Who may read and write (EGGMESH_AUTH); a route it does not guard gets no hook. */
  readonly auth: Authenticator;
  readonly metrics: Metrics;
}

type IdParams = { id: string };
/** Fastify gives a repeated query parameter as an array. */
type Query = Record<string, string | string[] | undefined>;

const zodIssues = (error: z.ZodError, prefix: (string | number)[]): Issue[] =>
  error.issues.flatMap((i): Issue[] => {
    const path = [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    // One issue per unknown field, at that field's path (zod reports them together at the object's path).
    if (i.code === 'unrecognized_keys') {
      return i.keys.map((key) => ({ path: [...path, key], code: i.code, message: `unknown field "${key}"` }));
    }
    return [{ path, code: i.code, message: i.message }];
  });

/** A query parameter given at most once. */
function queryValue(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new ApiError('EGGMESH_BAD_QUERY', [`give ${name} at most once`]);
  return value;
}

function queryInteger(query: Query, name: string, min: number, max: number): number | undefined {
  const value = queryValue(query, name);
  if (value === undefined) return undefined;
  const n = INTEGER_QUERY.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max))
    throw new ApiError('EGGMESH_BAD_QUERY', [`${name} must be an integer from ${min} to ${max}`]);
  return n;
}

/**
 * The query of a read route, refused when it names a parameter the route's schema does not (an
 * ignored `?coop_id=` reads as a filter that worked): the schema's `properties` are the one list.
 */
function knownQuery(query: Query, schema: ReadRouteSchema): Query {
  const known = Object.keys(schema.querystring.properties);
  const unknown = Object.keys(query).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new ApiError(
      'EGGMESH_BAD_QUERY',
      unknown.map((name) => `unknown query parameter "${name}" (this route takes ${known.join(', ')})`),
    );
  }
  return query;
}

function queryAt(query: Query): number | undefined {
  const value = queryValue(query, 'at');
  if (value === undefined) return undefined;
  const n = NUMBER_QUERY.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n)) throw new ApiError('EGGMESH_BAD_QUERY', ['at must be a number ≥ 0 (epoch ms)']);
  return n;
}

function checkId(id: string): string {
  if (!UUID.test(id)) throw new ApiError('EGGMESH_BAD_ID');
  return id.toLowerCase();
}

const bulkReadBody = z.strictObject({
  ids: z.array(z.string().regex(UUID, 'expected a UUID')).min(1),
  at: z.number().min(0).optional(),
});

/** The REST contract of domain.md §4 for one entity. */
function entityRoutes(app: FastifyInstance, name: EntityName, options: EntityRouteOptions) {
  const def = entities[name];
  const { primary, reader, config, clock, auth, metrics } = options;
  const base = `/${name}/api`;
  const newId = idGenerator(config.idVersion, clock);
  /** Route options that require a token granting the access, when the configuration asks for one. */
  const guarded = (access: Access) => {
    const onRequest = auth.hook(access);
    return onRequest === undefined ? {} : { onRequest };
  };
  const reads = guarded({ kind: 'read' });
  const writes = guarded({ kind: 'write', entity: name });
  const isProjection = def.kind === 'projection';
  const schemas = routeSchemas(name, config);

  const present = (record: StoredRecord, at?: number): Record<string, unknown> =>
    isProjection
      ? materialize(name as (typeof projectionNames)[number], record.payload, at ?? clock())
      : { ...record.payload, id: record.id };

  const commit = async (reply: FastifyReply, operations: WriteOperation[]) => {
    if (!primary) throw new Error('write-api: a write route without a primary store');
    const result = await metrics.timeStore('commit', () => primary.commit(operations));
    reply.header('x-log-position', String(result.position));
    return result;
  };

  const readMany = async (ids: readonly string[], at: number | undefined) => {
    if (ids.length > config.bulkMaxItems) throw new ApiError('EGGMESH_BULK_TOO_LARGE', [config.bulkMaxItems]);
    const wanted = ids.map(checkId);
    const rows = await metrics.timeStore('get_many', () => reader.getMany(name, wanted, { at }));
    const found = new Map(rows.map((r) => [r.id, r]));
    return wanted.flatMap((id) => {
      const record = found.get(id);
      return record ? [present(record, at)] : [];
    });
  };

  app.get<{ Querystring: Query }>(base, { schema: schemas.list, ...reads }, async (request, reply) => {
    const query = knownQuery(request.query, schemas.list);
    const limit = queryInteger(query, 'limit', 1, config.list.maxLimit) ?? config.list.defaultLimit;
    const at = queryAt(query);
    const after = queryValue(query, 'after') || undefined;
    const whereText = queryValue(query, 'where');
    const sort = query.sort === undefined ? undefined : ([] as string[]).concat(query.sort);
    if (whereText === undefined && sort === undefined) {
      // MeshQL's list: id order, and the last id as the cursor of a full page.
      const rows = await metrics.timeStore('list', () => reader.list(name, { limit, at, after }));
      if (rows.length === limit) reply.header('x-next-cursor', rows[rows.length - 1]!.id);
      return rows.map((r) => present(r, at));
    }
    const options = {
      where: whereText === undefined ? undefined : parseWhere(name, whereText),
      orderBy: parseSort(name, sort ?? []),
      first: limit,
      after,
      at,
      count: false,
    };
    const page = await metrics.timeStore('query', () => reader.query(name, options));
    if (page.hasNextPage) reply.header('x-next-cursor', page.cursors.at(-1)!);
    return page.records.map((r) => present(r, at));
  });

  app.get<{ Querystring: Query }>(`${base}/bulk`, { schema: schemas.bulkGet, ...reads }, async (request) => {
    const query = knownQuery(request.query, schemas.bulkGet);
    const raw = queryValue(query, 'ids');
    if (!raw) throw new ApiError('EGGMESH_BAD_QUERY', ['give the ids to read: ?ids=a,b,c']);
    const ids = raw.split(',');
    if (ids.some((id) => id === '')) throw new ApiError('EGGMESH_BAD_QUERY', ['ids has an empty entry']);
    return readMany(ids, queryAt(query));
  });

  app.get<{ Params: IdParams; Querystring: Query }>(
    `${base}/:id`,
    { schema: schemas.get, ...reads },
    async (request) => {
      const id = checkId(request.params.id);
      const at = queryAt(knownQuery(request.query, schemas.get));
      const record = await metrics.timeStore('get', () => reader.get(name, id, { at }));
      if (!record) throw new ApiError('EGGMESH_NOT_FOUND', [name, id]);
      return present(record, at);
    },
  );
  if (!primary) return;

  // A read, but a POST: the route table sends every POST to the write side, so it is registered there.
  app.post(`${base}/bulk/read`, { schema: schemas.bulkRead, ...reads }, async (request) => {
    const result = bulkReadBody.safeParse(request.body);
    if (!result.success) {
      throw new ApiError('EGGMESH_VALIDATION', ['bulk read request'], {
        issues: zodIssues(result.error, []),
      });
    }
    return readMany(result.data.ids, result.data.at);
  });

  const hidden = { schema: { hide: true } };
  if (isProjection) {
    const refuse = async (request: FastifyRequest, reply: FastifyReply) => {
      // A 405 must say what is allowed (RFC 9110 §15.5.6).
      reply.header('allow', allowedMethods(base)!.join(', '));
      throw new ApiError('EGGMESH_PROJECTION_READ_ONLY', [name], { method: request.method });
    };
    const writes = ['POST', 'PUT', 'DELETE', 'PATCH'];
    app.route({ method: writes, url: base, handler: refuse, ...hidden });
    app.route({ method: writes, url: `${base}/bulk`, handler: refuse, ...hidden });
    app.route({ method: writes, url: `${base}/:id`, handler: refuse, ...hidden });
    return;
  }

  // Without these, PUT/DELETE /x/api/bulk would reach the `/:id` routes and answer 400 for the id `bulk`.
  app.route({
    method: ['PUT', 'DELETE'],
    url: `${base}/bulk`,
    ...hidden,
    handler: async (request, reply) => {
      reply.header('allow', allowedMethods(`${base}/bulk`)!.join(', '));
      throw new ApiError('EGGMESH_METHOD_NOT_ALLOWED', [request.method, `${base}/bulk`]);
    },
  });

  /** Schema validation, then what the schema cannot know: the server clock. */
  const validate = (body: unknown, prefix: (string | number)[]) => {
    const result = def.schema.safeParse(body);
    if (!result.success) return { data: undefined, issues: zodIssues(result.error, prefix) };
    const issues = futureIssues(def, result.data, clock(), config.maxFutureMs, prefix);
    return issues.length > 0 ? { data: undefined, issues } : { data: result.data, issues };
  };

  const toCreate = (body: unknown, index?: number): WriteOperation => {
    const { data, issues } = validate(body, index === undefined ? [] : [index]);
    if (!data) {
      throw new ApiError('EGGMESH_VALIDATION', [name], { issues, ...(index === undefined ? {} : { index }) });
    }
    const { id, ...payload } = data as { id?: string };
    return { op: 'create', entity: name, id: id ?? newId(), payload };
  };

  app.post(base, { schema: schemas.create, ...writes }, async (request, reply) => {
    const operation = toCreate(request.body);
    const result = await commit(reply, [operation]);
    reply.code(201);
    return present(result.records[0]!);
  });

  app.post(`${base}/bulk`, { schema: schemas.bulkCreate, ...writes }, async (request, reply) => {
    const body = request.body;
    if (!Array.isArray(body)) {
      throw new ApiError('EGGMESH_VALIDATION', [`${name} array`], {
        issues: [{ path: [], code: 'invalid_type', message: 'expected a JSON array' }],
      });
    }
    if (body.length > config.bulkMaxItems)
      throw new ApiError('EGGMESH_BULK_TOO_LARGE', [config.bulkMaxItems]);
    const operations = body.map((item, index) => toCreate(item, index));
    const result = await commit(reply, operations);
    reply.code(201);
    return result.records.map((r) => present(r));
  });

  app.put<{ Params: IdParams }>(`${base}/:id`, { schema: schemas.put, ...writes }, async (request, reply) => {
    const id = checkId(request.params.id);
    const { data, issues } = validate(request.body, []);
    if (!data) throw new ApiError('EGGMESH_VALIDATION', [name], { issues });
    const { id: bodyId, ...payload } = data as { id?: string };
    if (bodyId !== undefined && bodyId.toLowerCase() !== id.toLowerCase())
      throw new ApiError('EGGMESH_ID_MISMATCH');
    const result = await commit(reply, [{ op: 'update', entity: name, id, payload }]);
    return present(result.records[0]!);
  });

  app.delete<{ Params: IdParams }>(
    `${base}/:id`,
    { schema: schemas.delete, ...writes },
    async (request, reply) => {
      const id = checkId(request.params.id);
      await commit(reply, [{ op: 'delete', entity: name, id }]);
      return { id, status: 'deleted' };
    },
  );
}

/**
 * Event timestamps later than the server time + `maxFutureMs` are refused: a report years ahead
 * would make every later projection document carry the empty days in between.
 */
function futureIssues(
  def: EntityDefinition,
  data: Record<string, unknown>,
  now: number,
  maxFutureMs: number,
  prefix: (string | number)[],
): Issue[] {
  if (def.kind !== 'event' || typeof data.timestamp !== 'string') return [];
  const bound = now + maxFutureMs;
  if (Date.parse(data.timestamp) <= bound) return [];
  return [
    {
      path: [...prefix, 'timestamp'],
      code: 'too_far_in_future',
      message: `timestamp must not be later than the server time + ${maxFutureMs} ms (${new Date(bound).toISOString()})`,
    },
  ];
}

export async function registerEntityRoutes(app: FastifyInstance, options: EntityRouteOptions) {
  for (const name of entityNames) entityRoutes(app, name, options);
}

/** The methods each REST path answers, for 405 responses. */
export function allowedMethods(path: string): string[] | null {
  if (path === '/health' || path === '/ready' || path === '/openapi.json') return ['GET', 'HEAD', 'OPTIONS'];
  const match = /^\/([a-z_]+)\/api(\/bulk\/read|\/bulk|\/[^/]+)?\/?$/.exec(path);
  if (!match || !(match[1]! in entities)) return null;
  const def = entities[match[1] as EntityName];
  if (match[2] === '/bulk/read') return ['POST', 'OPTIONS'];
  if (def.kind === 'projection') return ['GET', 'HEAD', 'OPTIONS'];
  if (!match[2] || match[2] === '/bulk') return ['GET', 'HEAD', 'POST', 'OPTIONS'];
  return ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'];
}
