import { type EntityName, entities, type FieldKind, type JsonSchema } from '@eggmesh/schema';
import { MAX_IN_VALUES, type OrderBy, type Where } from '@eggmesh/store';
import { z } from 'zod';
import { ApiError } from './errors.js';

/**
 * The filter, sort and cursor of a REST list, as query parameters that say what the GraphQL
 * connection's arguments say: `where` is the connection's `where` as JSON text, `sort` its `orderBy`
 * (one field per parameter, `-` for descending), `limit` its `first`, `after` its cursor. Each
 * entity's filterable and sortable fields are the catalogue's `queryFields` (and `id`); the values a
 * filter compares with are checked by the entity's own field rules, so a filter that names a hen's
 * `coop_id` takes a UUID as a hen's body does.
 */

/** How deep `and`, `or` and `not` nest: as in GraphQL (`HenWhere`, `HenWhere2`), two levels. */
const WHERE_LEVELS = 2;

const RANGED = new Set<FieldKind | 'id'>(['number', 'date', 'timestamp']);

/** A zod schema's shape, or its inner schema once optional/nullable are taken off. */
interface Unwrappable {
  readonly def: { readonly type: string };
  unwrap?: () => z.ZodType;
}

/** The values a filter on `field` compares with: the field's own rule, numbers any finite number. */
function valueSchema(entity: EntityName, field: string, kind: FieldKind | 'id'): z.ZodType {
  if (kind === 'number') return z.number();
  const shape = (entities[entity].schema as unknown as { shape: Record<string, z.ZodType> }).shape;
  let schema = shape[field] as z.ZodType | undefined;
  if (field === 'id') schema = z.uuid().transform((value) => value.toLowerCase());
  if (!schema) throw new Error(`${entity}.${field} is queryable but not in its schema`);
  for (;;) {
    const inner = schema as unknown as Unwrappable;
    if ((inner.def.type === 'optional' || inner.def.type === 'nullable') && inner.unwrap) {
      schema = inner.unwrap();
    } else return schema;
  }
}

/** The queryable fields of an entity, `id` first, with their kinds. */
export function queryableFields(entity: EntityName): Array<[string, FieldKind | 'id']> {
  return [['id', 'id'], ...Object.entries(entities[entity].queryFields)];
}

function conditionSchema(entity: EntityName, field: string, kind: FieldKind | 'id'): z.ZodType {
  const value = valueSchema(entity, field, kind);
  const shape: Record<string, z.ZodType> = {
    eq: value.optional(),
    in: z.array(value).max(MAX_IN_VALUES).optional(),
  };
  if (RANGED.has(kind)) {
    for (const op of ['gt', 'gte', 'lt', 'lte']) shape[op] = value.optional();
  }
  return z.strictObject(shape).optional();
}

const whereSchemas = new Map<EntityName, z.ZodType>();

/** The `where` of an entity's list: fields, and (on the first level) `and`, `or`, `not`. */
export function whereSchema(entity: EntityName): z.ZodType {
  const known = whereSchemas.get(entity);
  if (known) return known;
  const fields: Record<string, z.ZodType> = {};
  for (const [field, kind] of queryableFields(entity)) fields[field] = conditionSchema(entity, field, kind);
  let level: z.ZodType = z.strictObject(fields);
  for (let i = 1; i < WHERE_LEVELS; i++) {
    level = z.strictObject({
      ...fields,
      and: z.array(level).optional(),
      or: z.array(level).optional(),
      not: level.optional(),
    });
  }
  whereSchemas.set(entity, level);
  return level;
}

/** The JSON Schema of `where`, as the OpenAPI document states it (a JSON query parameter). */
export function whereJsonSchema(entity: EntityName): JsonSchema {
  const schema = z.toJSONSchema(whereSchema(entity), { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete schema.$schema;
  return schema;
}

/** What `sort` takes on an entity's list: each queryable field, ascending or (`-`) descending. */
export function sortValues(entity: EntityName): string[] {
  return queryableFields(entity).flatMap(([field]) => [field, `-${field}`]);
}

/** `where` as the store takes it: JSON text checked against the entity's filter schema. */
export function parseWhere(entity: EntityName, text: string): Where {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('EGGMESH_BAD_QUERY', [
      'where must be a JSON object, e.g. where={"zone":{"eq":"north"}} (URL-encoded)',
    ]);
  }
  const result = whereSchema(entity).safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue?.path.map(String).join('.') ?? '';
    const detail =
      issue?.code === 'unrecognized_keys'
        ? `unknown ${issue.keys.join(', ')} (filters take ${queryableFields(entity)
            .map(([f]) => f)
            .join(
              ', ',
            )}, and, or, not; comparisons eq, in, and gt, gte, lt, lte on numbers, dates and timestamps)`
        : issue?.message;
    throw new ApiError('EGGMESH_BAD_QUERY', [`where${path ? `.${path}` : ''}: ${detail}`]);
  }
  return result.data as Where;
}

/**
 * `sort` as the store's order: one field per parameter in order, `-` for descending. A field sorted
 * by again, or anything after `id`, cannot change the order (the earlier key already ordered those
 * rows), so it is dropped.
 */
export function parseSort(entity: EntityName, values: readonly string[]): OrderBy[] {
  const allowed = sortValues(entity);
  const order: OrderBy[] = [];
  for (const value of values) {
    if (!allowed.includes(value)) {
      throw new ApiError('EGGMESH_BAD_QUERY', [
        `sort cannot be ${JSON.stringify(value.slice(0, 64))}: one field per sort parameter, from ${allowed.join(', ')}`,
      ]);
    }
    const field = value.replace(/^-/, '');
    if (order.some((o) => o.field === field || o.field === 'id')) continue;
    order.push({ field, direction: value.startsWith('-') ? 'DESC' : 'ASC' });
  }
  return order;
}
