import { entities, entityNames, jsonSchemaOf } from '@eggmesh/schema';
import { errorCatalogue } from './errors.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });
const errorResponse = (description: string) => ({ description, content: json(ref('Error')) });

/** OpenAPI 3.1 for the REST contract, generated from the schema package's catalogue. */
export function openApiDocument(version: string) {
  const schemas: Record<string, unknown> = {
    Error: {
      type: 'object',
      required: ['error', 'code'],
      properties: {
        error: { type: 'string' },
        code: { type: 'string', enum: Object.keys(errorCatalogue) },
        issues: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              path: { type: 'array', items: { type: ['string', 'integer'] } },
              code: { type: 'string' },
              message: { type: 'string' },
            },
          },
        },
        index: { type: 'integer', description: 'the failing item of a bulk request' },
      },
    },
    Deleted: {
      type: 'object',
      required: ['id', 'status'],
      properties: { id: { type: 'string', format: 'uuid' }, status: { const: 'deleted' } },
    },
  };
  const paths: Record<string, unknown> = {};
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
  const listParams = [
    { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 } },
    { name: 'after', in: 'query', schema: { type: 'string' }, description: 'id cursor: rows after this id' },
    { name: 'at', in: 'query', schema: { type: 'number' }, description: 'read as of this time (epoch ms)' },
  ];
  for (const name of entityNames) {
    const def = entities[name];
    const type = def.typeName;
    schemas[type] = jsonSchemaOf(name, 'record');
    const readOnly = def.kind === 'projection';
    if (!readOnly) schemas[`${type}Input`] = jsonSchemaOf(name, 'input');
    const tag = [name];
    const list = { type: 'array', items: ref(type) };
    const write = (summary: string, status: string, body: unknown, response: unknown) => ({
      tags: tag,
      summary,
      requestBody: { required: true, content: json(body) },
      responses: {
        [status]: {
          description: summary,
          headers: { 'x-log-position': { schema: { type: 'integer' }, description: 'event log position' } },
          content: json(response),
        },
        '400': errorResponse('invalid request'),
      },
    });
    paths[`/${name}/api`] = {
      get: {
        tags: tag,
        summary: `List ${name} (id order)`,
        parameters: listParams,
        responses: { '200': { description: 'live rows', content: json(list) } },
      },
      ...(readOnly ? {} : { post: write(`Create a ${name}`, '201', ref(`${type}Input`), ref(type)) }),
    };
    paths[`/${name}/api/bulk`] = {
      get: {
        tags: tag,
        summary: `Read many ${name} by id`,
        parameters: [
          { name: 'ids', in: 'query', required: true, schema: { type: 'string' }, description: 'a,b,c' },
        ],
        responses: {
          '200': { description: 'the live ones', content: json(list) },
          '400': errorResponse('no ids'),
        },
      },
      ...(readOnly
        ? {}
        : {
            post: write(
              `Create many ${name}, all or nothing`,
              '201',
              { type: 'array', items: ref(`${type}Input`) },
              list,
            ),
          }),
    };
    paths[`/${name}/api/{id}`] = {
      parameters: [idParam],
      get: {
        tags: tag,
        summary: `Read one ${name}`,
        parameters: listParams.slice(2),
        responses: {
          '200': { description: 'found', content: json(ref(type)) },
          '404': errorResponse('not found'),
        },
      },
      ...(readOnly
        ? {}
        : {
            put: {
              ...write(`Replace a ${name}`, '200', ref(`${type}Input`), ref(type)),
              responses: {
                '200': { description: 'replaced', content: json(ref(type)) },
                '400': errorResponse('invalid'),
                '404': errorResponse('not found'),
              },
            },
            delete: {
              tags: tag,
              summary: `Delete a ${name}`,
              responses: {
                '200': { description: 'deleted', content: json(ref('Deleted')) },
                '404': errorResponse('not found'),
              },
            },
          }),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'eggmesh write API',
      version,
      description:
        'REST writes (and read-your-writes reads) for the egg economy. Errors carry a stable `code`.',
    },
    paths,
    components: { schemas },
  };
}
