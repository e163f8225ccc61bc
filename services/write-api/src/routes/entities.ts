import { randomUUID } from 'node:crypto';
import { materialize, type projectionNames } from '@eggmesh/projections';
import { type EntityDefinition, type EntityName, entities, entityNames } from '@eggmesh/schema';
import type { Config } from '@eggmesh/service-kit';
import type { EntityReader, PrimaryStore, StoredRecord, WriteOperation } from '@eggmesh/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type Issue } from '../errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface EntityRouteOptions {
  readonly config: Config;
  readonly primary: PrimaryStore;
  /** Reads every entity: the primary for actors and events, the projection store for projections. */
  readonly reader: EntityReader;
  readonly clock: () => number;
}

type IdParams = { id: string };
type ListQuery = { limit?: string; after?: string; at?: string; ids?: string };

function validationIssues(def: EntityDefinition, body: unknown, prefix: (string | number)[] = []) {
  const result = def.schema.safeParse(body);
  if (result.success) return { data: result.data, issues: [] as Issue[] };
  const issues = result.error.issues.flatMap((i): Issue[] => {
    const path = [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    // One issue per unknown field, at that field's path (zod reports them together at the object's path).
    if (i.code === 'unrecognized_keys') {
      return i.keys.map((key) => ({ path: [...path, key], code: i.code, message: `unknown field "${key}"` }));
    }
    return [{ path, code: i.code, message: i.message }];
  });
  return { data: undefined, issues };
}

function parseNumber(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min)
    throw new ApiError('EGGMESH_BAD_QUERY', [`${name} must be a number ≥ ${min}`]);
  return n;
}

function checkId(id: string): string {
  if (!UUID.test(id)) throw new ApiError('EGGMESH_BAD_ID');
  return id.toLowerCase();
}

/** The REST contract of domain.md §4 for one entity. */
function entityRoutes(app: FastifyInstance, name: EntityName, options: EntityRouteOptions) {
  const def = entities[name];
  const { primary, reader, config, clock } = options;
  const base = `/${name}/api`;
  const isProjection = def.kind === 'projection';

  const present = (record: StoredRecord, at?: number): Record<string, unknown> =>
    isProjection
      ? materialize(name as (typeof projectionNames)[number], record.payload, at ?? clock())
      : { ...record.payload, id: record.id };

  const commit = async (reply: FastifyReply, operations: WriteOperation[]) => {
    const result = await primary.commit(operations);
    reply.header('x-log-position', String(result.position));
    return result;
  };

  const readQuery = (query: ListQuery) => {
    const limit = parseNumber(query.limit, 'limit', 1) ?? config.list.defaultLimit;
    if (limit > config.list.maxLimit) {
      throw new ApiError('EGGMESH_BAD_QUERY', [`limit must be at most ${config.list.maxLimit}`]);
    }
    return { limit, at: parseNumber(query.at, 'at', 0), after: query.after || undefined };
  };

  app.get<{ Querystring: ListQuery }>(base, async (request, reply) => {
    const page = readQuery(request.query);
    const rows = await reader.list(name, page);
    if (rows.length === page.limit) reply.header('x-next-cursor', rows[rows.length - 1]!.id);
    return rows.map((r) => present(r, page.at));
  });

  app.get<{ Querystring: ListQuery }>(`${base}/bulk`, async (request) => {
    const raw = request.query.ids;
    if (!raw) throw new ApiError('EGGMESH_BAD_QUERY', ['give the ids to read: ?ids=a,b,c']);
    const ids = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (ids.length > config.bulkMaxItems) throw new ApiError('EGGMESH_BULK_TOO_LARGE', [config.bulkMaxItems]);
    ids.forEach(checkId);
    const at = parseNumber(request.query.at, 'at', 0);
    const found = new Map((await reader.getMany(name, ids, { at })).map((r) => [r.id, r]));
    return ids.flatMap((id) => {
      const record = found.get(id);
      return record ? [present(record, at)] : [];
    });
  });

  app.get<{ Params: IdParams; Querystring: ListQuery }>(`${base}/:id`, async (request) => {
    const id = checkId(request.params.id);
    const at = parseNumber(request.query.at, 'at', 0);
    const record = await reader.get(name, id, { at });
    if (!record) throw new ApiError('EGGMESH_NOT_FOUND', [name, id]);
    return present(record, at);
  });

  if (isProjection) {
    const refuse = async (request: FastifyRequest, reply: FastifyReply) => {
      // A 405 must say what is allowed (RFC 9110 §15.5.6).
      reply.header('allow', allowedMethods(base)!.join(', '));
      throw new ApiError('EGGMESH_PROJECTION_READ_ONLY', [name], { method: request.method });
    };
    app.route({ method: ['POST', 'PUT', 'DELETE', 'PATCH'], url: base, handler: refuse });
    app.route({ method: ['POST', 'PUT', 'DELETE', 'PATCH'], url: `${base}/bulk`, handler: refuse });
    app.route({ method: ['POST', 'PUT', 'DELETE', 'PATCH'], url: `${base}/:id`, handler: refuse });
    return;
  }

  // Without these, PUT/DELETE /x/api/bulk would reach the `/:id` routes and answer 400 for the id `bulk`.
  app.route({
    method: ['PUT', 'DELETE'],
    url: `${base}/bulk`,
    handler: async (request, reply) => {
      reply.header('allow', allowedMethods(`${base}/bulk`)!.join(', '));
      throw new ApiError('EGGMESH_METHOD_NOT_ALLOWED', [request.method, `${base}/bulk`]);
    },
  });

  const toCreate = (body: unknown, index?: number): WriteOperation => {
    const { data, issues } = validationIssues(def, body, index === undefined ? [] : [index]);
    if (!data) {
      throw new ApiError('EGGMESH_VALIDATION', [name], { issues, ...(index === undefined ? {} : { index }) });
    }
    const { id, ...payload } = data as { id?: string };
    return { op: 'create', entity: name, id: id ?? randomUUID(), payload };
  };

  app.post(base, async (request, reply) => {
    const operation = toCreate(request.body);
    const result = await commit(reply, [operation]);
    reply.code(201);
    return present(result.records[0]!);
  });

  app.post(`${base}/bulk`, async (request, reply) => {
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

  app.put<{ Params: IdParams }>(`${base}/:id`, async (request, reply) => {
    const id = checkId(request.params.id);
    const { data, issues } = validationIssues(def, request.body);
    if (!data) throw new ApiError('EGGMESH_VALIDATION', [name], { issues });
    const { id: bodyId, ...payload } = data as { id?: string };
    if (bodyId !== undefined && bodyId.toLowerCase() !== id.toLowerCase())
      throw new ApiError('EGGMESH_ID_MISMATCH');
    const result = await commit(reply, [{ op: 'update', entity: name, id, payload }]);
    return present(result.records[0]!);
  });

  app.delete<{ Params: IdParams }>(`${base}/:id`, async (request, reply) => {
    const id = checkId(request.params.id);
    await commit(reply, [{ op: 'delete', entity: name, id }]);
    return { id, status: 'deleted' };
  });
}

export async function registerEntityRoutes(app: FastifyInstance, options: EntityRouteOptions) {
  for (const name of entityNames) entityRoutes(app, name, options);
}

/** The methods each REST path answers, for 405 responses. */
export function allowedMethods(path: string): string[] | null {
  const match = /^\/([a-z_]+)\/api(\/bulk|\/[^/]+)?\/?$/.exec(path);
  if (!match || !(match[1]! in entities)) return null;
  const def = entities[match[1] as EntityName];
  if (def.kind === 'projection') return ['GET', 'HEAD', 'OPTIONS'];
  if (!match[2] || match[2] === '/bulk') return ['GET', 'HEAD', 'POST', 'OPTIONS'];
  return ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'];
}
