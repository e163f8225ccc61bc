import {
  type EntityDefinition,
  type EntityName,
  entities,
  type JsonSchema,
  jsonSchemaOf,
} from '@eggmesh/schema';
import type { RestConfig } from '@eggmesh/service-kit';
import { errorCatalogue } from './errors.js';
import { queryableFields, sortValues, whereJsonSchema } from './list-query.js';

/**
 * Fastify route schemas of the REST contract. They are the single source of `/openapi.json`
 * (@fastify/swagger walks the registered routes) and of fast response serialization.
 * Requests are NOT validated by Fastify against them: the handlers validate (zod for bodies, the
 * parsers in routes/entities.ts for paths and queries) so every error keeps our format. Keep the
 * two in step: each constraint here is one the handler enforces, and the other way round.
 */

/** Any hex UUID, any case: what the path accepts (stored lower-case). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const uuidBody = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
/** `ids` of a bulk GET: UUIDs separated by commas, nothing else. */
export const ID_LIST_PATTERN = `^${uuidBody}(,${uuidBody})*$`;
/** A non-negative decimal integer as a query value. */
export const INTEGER_QUERY = /^[0-9]+$/;
/** A non-negative JSON number as a query value (`at`). */
export const NUMBER_QUERY = /^(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

const ERROR_ID = 'Error';
const DELETED_ID = 'Deleted';
const ref = (id: string) => ({ $ref: `${id}#` });

export const errorSchema = {
  $id: ERROR_ID,
  type: 'object',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string' },
    code: { type: 'string', enum: Object.keys(errorCatalogue) },
    issues: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'code', 'message'],
        properties: {
          path: { type: 'array', items: { type: ['string', 'integer'] } },
          code: { type: 'string' },
          message: { type: 'string' },
        },
      },
    },
    index: { type: 'integer', description: 'the failing item of a bulk request' },
    method: { type: 'string' },
    cause: { type: 'string' },
  },
  additionalProperties: true,
} as const;

const deletedSchema = {
  $id: DELETED_ID,
  type: 'object',
  required: ['id', 'status'],
  properties: { id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: ['deleted'] } },
} as const;

/** Shared schemas, registered once with `app.addSchema`; they become `components.schemas`. */
export function sharedSchemas(names: readonly EntityName[], maxFutureMs: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [errorSchema, deletedSchema];
  for (const name of names) {
    const def = entities[name];
    out.push({ $id: def.typeName, ...jsonSchemaOf(name, 'record') });
    if (def.kind === 'projection') continue;
    const input = inputSchema(def, maxFutureMs);
    out.push({ $id: `${def.typeName}Input`, ...input });
    // PUT: the path names the entity. (A body id equal to it is tolerated, any other is 400
    // EGGMESH_ID_MISMATCH; the schema leaves `id` out rather than promise what it cannot check.)
    const { id: _id, ...fields } = input.properties ?? {};
    out.push({
      $id: `${def.typeName}Replace`,
      ...input,
      properties: fields,
      required: (input.required ?? []).filter((f) => f !== 'id'),
    });
  }
  return out;
}

function inputSchema(def: EntityDefinition, maxFutureMs: number): JsonSchema {
  const schema = jsonSchemaOf(def.name, 'input');
  const timestamp = schema.properties?.timestamp;
  if (timestamp) {
    timestamp.description =
      `ISO-8601 date-time with an offset. The write-api (not this schema, which cannot know the clock) ` +
      `also refuses a timestamp later than the server time + EGGMESH_MAX_FUTURE_MS (here ${maxFutureMs} ms): ` +
      `400 EGGMESH_VALIDATION, issue code too_far_in_future.`;
  }
  if (def.name === 'container_transfer') {
    schema.description = 'source_container_id and dest_container_id must differ (400 otherwise).';
  }
  return schema;
}

const error = (description: string) => ({ description, ...ref(ERROR_ID) });

/** Errors any route can answer: a malformed request line or headers, and storage failures. */
const always = {
  400: error('bad request: a path id, query parameter or body that the route refuses'),
  431: error('request headers (or the URL) larger than the server accepts'),
  500: error('storage failed'),
};
/** Errors of a route that reads a request body. */
const withBody = {
  413: error('body larger than EGGMESH_BODY_LIMIT_BYTES'),
  415: error('body not sent as application/json'),
};

const positionHeader = {
  'x-log-position': { type: 'integer', description: 'the event log position of the (last) entry written' },
};

/** A read route's schema: its querystring's `properties` name every parameter it takes. */
export interface ReadRouteSchema {
  readonly [key: string]: unknown;
  querystring: { properties: object; [key: string]: unknown };
}

export interface RouteSchemas {
  list: ReadRouteSchema;
  create: object;
  bulkGet: ReadRouteSchema;
  bulkCreate: object;
  bulkRead: object;
  get: ReadRouteSchema;
  put: object;
  delete: object;
}

/** The schema of every REST operation on one entity. */
export function routeSchemas(name: EntityName, config: RestConfig): RouteSchemas {
  const def = entities[name];
  const tags = [name];
  // What this configuration can also answer: 401/403 where a token is required, 429 with a rate limit.
  const guard = {
    401: error('no valid bearer token (EGGMESH_AUTH=jwt)'),
    403: error('the token does not grant the scope this needs'),
  };
  const limited = config.rateLimitPerMin > 0 ? { 429: error('rate limit reached; see retry-after') } : {};
  const writeGuard = { ...(config.auth.mode === 'jwt' ? guard : {}), ...limited };
  const readGuard = { ...(config.auth.reads ? guard : {}), ...limited };
  const record = ref(def.typeName);
  const input = ref(`${def.typeName}Input`);
  const list = { type: 'array', items: record };
  const at = {
    type: 'number',
    minimum: 0,
    description: 'read as of this time (epoch ms): the newest version written at or before it',
  };
  const fieldList = queryableFields(name)
    .map(([field]) => field)
    .join(', ');
  const idParams = {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'string', pattern: UUID_PATTERN, description: 'a UUID, any case' } },
  };
  return {
    list: {
      tags,
      summary: `List ${name}: id order, or filtered and sorted`,
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: config.list.maxLimit,
            description: `page size (default ${config.list.defaultLimit}); GraphQL's \`first\``,
          },
          after: {
            type: 'string',
            description:
              'the x-next-cursor of the previous page: without where and sort an id (rows after it), ' +
              'with them the cursor of that query (another query refuses it)',
          },
          at,
          where: {
            ...whereJsonSchema(name),
            'x-consume': 'application/json',
            description:
              `a filter as JSON, the GraphQL connection's \`where\`: one key per field ` +
              `(${fieldList}), each an object of comparisons that all hold (eq, in; gt, gte, lt, lte on ` +
              'numbers, dates and timestamps), and and/or/not of such filters, e.g. ' +
              `where={"${queryableFields(name).at(-1)![0]}":{"in":[…]}}`,
          },
          sort: {
            type: 'array',
            items: { type: 'string', enum: sortValues(name) },
            description:
              'sort keys in order, one field per parameter, `-` for descending (sort=-a&sort=b); ' +
              'id ascending breaks ties. Rows without the field come first ascending, last descending',
          },
        },
      },
      response: {
        200: {
          description:
            'live rows; x-next-cursor when there are more: without where and sort when the page is full',
          headers: { 'x-next-cursor': { type: 'string' } },
          ...list,
        },
        ...always,
        ...readGuard,
      },
    },
    create: {
      tags,
      summary: `Create a ${name}`,
      body: input,
      response: {
        201: { description: 'created', headers: positionHeader, ...record },
        ...always,
        ...writeGuard,
        409: error('an entity with this id exists'),
        ...withBody,
      },
    },
    bulkGet: {
      tags,
      summary: `Read many ${name} by id (up to ${config.bulkMaxItems}; POST bulk/read for long lists)`,
      querystring: {
        type: 'object',
        required: ['ids'],
        additionalProperties: false,
        properties: {
          ids: {
            type: 'string',
            pattern: ID_LIST_PATTERN,
            // 36 characters per UUID plus the commas: at most bulkMaxItems ids.
            maxLength: config.bulkMaxItems * 37 - 1,
            description: 'comma-separated UUIDs, any case',
          },
          at,
        },
      },
      response: {
        200: { description: 'the live ones, in the order asked', ...list },
        ...always,
        ...readGuard,
      },
    },
    bulkCreate: {
      tags,
      summary: `Create many ${name}, all or nothing`,
      body: { type: 'array', items: input, maxItems: config.bulkMaxItems },
      response: {
        201: { description: 'created, in order', headers: positionHeader, ...list },
        ...always,
        ...writeGuard,
        409: error('an item has the id of an existing entity (index names it)'),
        ...withBody,
      },
    },
    bulkRead: {
      tags,
      summary: `Read many ${name} by id (POST form of GET bulk, for long lists)`,
      body: {
        type: 'object',
        required: ['ids'],
        additionalProperties: false,
        properties: {
          ids: {
            type: 'array',
            minItems: 1,
            maxItems: config.bulkMaxItems,
            items: { type: 'string', pattern: UUID_PATTERN },
          },
          at,
        },
      },
      response: {
        200: { description: 'the live ones, in the order asked', ...list },
        ...always,
        ...readGuard,
        ...withBody,
      },
    },
    get: {
      tags,
      summary: `Read one ${name}`,
      params: idParams,
      querystring: { type: 'object', additionalProperties: false, properties: { at } },
      response: {
        200: { description: 'found', ...record },
        ...always,
        ...readGuard,
        404: error('no live entity with this id'),
      },
    },
    put: {
      tags,
      summary: `Replace a ${name}`,
      params: idParams,
      body: ref(`${def.typeName}Replace`),
      response: {
        200: { description: 'replaced', headers: positionHeader, ...record },
        ...always,
        ...writeGuard,
        404: error('no live entity with this id'),
        ...withBody,
      },
    },
    delete: {
      tags,
      summary: `Delete a ${name}`,
      params: idParams,
      response: {
        200: { description: 'deleted', headers: positionHeader, ...ref(DELETED_ID) },
        ...always,
        ...writeGuard,
        404: error('no live entity with this id'),
        ...withBody,
      },
    },
  };
}
