import {
  type EntityName,
  entities,
  entityNames,
  type FieldKind,
  type FilterQuery,
  type JsonSchema,
  jsonSchemaOf,
  relationsOf,
} from '@eggmesh/schema';
import { unifiedNames } from './naming.js';
import { SAFE_INT_SDL } from './safe-int.js';

/** Paging defaults, written into the schema descriptions. */
export interface ListLimits {
  readonly defaultLimit: number;
  readonly maxLimit: number;
}

/** The abuse limits, written into the unified schema's description of `Query`. */
export interface QueryLimits {
  readonly maxDepth: number;
  readonly maxCost: number;
  readonly maxFields: number;
  readonly maxRows: number;
}

const block = (text: string, indent = ''): string => `${indent}"""\n${indent}${text}\n${indent}"""`;

const scalarNames: Readonly<Record<string, string>> = {
  integer: 'Int',
  number: 'Float',
  string: 'String',
  boolean: 'Boolean',
};

/**
 * The GraphQL type of one JSON Schema property: `id` is ID; optional or nullable fields are nullable.
 * Integers are Int (entities: the write side keeps them within 32 bits) or SafeInt (projection
 * counters), and always nullable: a value stored out of range nulls that field only instead of its
 * whole row, list and response.
 */
function fieldType(entity: EntityName, name: string, property: JsonSchema, required: boolean): string {
  if (name === 'id') return 'ID!';
  const members = property.anyOf ?? [property];
  let nullable = !required;
  let scalar: string | undefined;
  for (const member of members) {
    const types = Array.isArray(member.type) ? member.type : [member.type ?? (member.enum ? 'string' : '')];
    for (const type of types) {
      if (type === 'null') nullable = true;
      else scalar ??= scalarNames[type];
    }
  }
  if (!scalar) throw new Error(`no GraphQL type for ${entity}.${name}`);
  if (scalar === 'Int') return entities[entity].kind === 'projection' ? 'SafeInt' : 'Int';
  return nullable ? scalar : `${scalar}!`;
}

function describeEntity(entity: EntityName): string {
  const { kind, projectionKey } = entities[entity];
  if (kind === 'projection') {
    return `${entity}: a projection the projector maintains from the event log; its id is its \`${projectionKey}\`.`;
  }
  return `${entity}: ${kind === 'actor' ? 'an actor' : 'an event'} written through \`/${entity}/api\`.`;
}

/**
 * The SDL of one entity's type: its payload fields and its relation fields (list ones page; in the
 * unified schema, `filtered`, they also take the target's `where` and `orderBy`).
 */
export function typeSdl(entity: EntityName, limits: ListLimits, filtered = false): string {
  const schema = jsonSchemaOf(entity, 'record');
  const required = new Set(schema.required ?? []);
  const lines = Object.entries(schema.properties ?? {}).map(
    ([name, property]) => `  ${name}: ${fieldType(entity, name, property, required.has(name))}`,
  );
  for (const relation of relationsOf(entity)) {
    const target = entities[relation.target].typeName;
    const text =
      relation.kind === 'single'
        ? `The ${relation.target} this ${entity}'s \`${relation.parentField}\` points at, or null; read at the same \`at\` as this row.`
        : `The ${relation.target} rows whose \`${relation.targetField}\` is this ${entity}'s id, read at the same \`at\` as this row. ${pageText(limits)} Each parent row gets its own page.${filtered ? ` With \`where\` and/or \`orderBy\` (as on ${unifiedNames(relation.target, []).connection}): the first \`limit\` matching rows in that order, then by id; \`after\` is refused there (page with the connection field).` : ''}`;
    lines.push(block(text, '  '));
    const filters = filtered ? `, where: ${target}Where, orderBy: [${target}OrderBy!]` : '';
    lines.push(
      relation.kind === 'single'
        ? `  ${relation.field}: ${target}`
        : `  ${relation.field}(${RELATION_PAGE_ARGS}${filters}): [${target}!]`,
    );
  }
  return `${block(describeEntity(entity))}\ntype ${entities[entity].typeName} {\n${lines.join('\n')}\n}`;
}

/** The entity and every entity reachable from it through relations. */
export function reachableFrom(entity: EntityName): EntityName[] {
  const seen = new Set<EntityName>([entity]);
  const queue: EntityName[] = [entity];
  for (let next = queue.shift(); next; next = queue.shift()) {
    for (const relation of relationsOf(next)) {
      if (!seen.has(relation.target)) {
        seen.add(relation.target);
        queue.push(relation.target);
      }
    }
  }
  return entityNames.filter((e) => seen.has(e));
}

const AT_TEXT =
  '`at` (epoch ms) reads the newest version written at or before that time, here and in every nested relation.';

const pageText = (limits: ListLimits): string =>
  `Ordered by id, one page at a time: at most \`limit\` rows (default ${limits.defaultLimit}, at most ${limits.maxLimit}; outside 1..${limits.maxLimit} this field answers null with an \`EGGMESH_BAD_QUERY\` error) whose id sorts after \`after\` (pass the last id of the previous page).`;

/** The per-entity endpoints' root lists: every row without `limit` (as MeshQL), a page with it. */
const wholeListText = (limits: ListLimits): string =>
  `Ordered by id. Without \`limit\`: every matching row (refused when the response would exceed its row or byte budget). With \`limit\`: one page of at most \`limit\` rows (1..${limits.maxLimit}, else the request is refused). Either way only rows whose id sorts after \`after\`.`;

const filterArgument = (filter: FilterQuery, nonNull: boolean): string =>
  `${filter.argument}: ${filter.argument === 'id' ? 'ID' : 'String'}${nonNull ? '!' : ''}`;

const PAGE_ARGS = 'at: Float, limit: Int, after: ID';
const RELATION_PAGE_ARGS = 'limit: Int, after: ID';

/**
 * The schema of `POST /<entity>/graph`: MeshQL's query names and argument names (`getById`, `getAll`,
 * the `getBy…` filters, FK filters taking `id`), plus `limit`/`after` paging on lists.
 */
export function entitySdl(entity: EntityName, limits: ListLimits): string {
  const { typeName, filters } = entities[entity];
  const fields = [
    block(`The ${entity} with this id, or null. ${AT_TEXT}`, '  '),
    `  getById(id: ID, at: Float): ${typeName}`,
    block(`Every ${entity}. ${wholeListText(limits)} ${AT_TEXT}`, '  '),
    `  getAll(${PAGE_ARGS}): [${typeName}]`,
  ];
  for (const filter of filters) {
    fields.push(
      block(
        `The ${entity} rows whose \`${filter.field}\` equals \`${filter.argument}\`. ${wholeListText(limits)} ${AT_TEXT}`,
        '  ',
      ),
      `  ${filter.query}(${filterArgument(filter, false)}, ${PAGE_ARGS}): [${typeName}]`,
    );
  }
  const types = reachableFrom(entity).map((e) => typeSdl(e, limits));
  return `${SAFE_INT_SDL}\n\n${types.join('\n\n')}\n\ntype Query {\n${fields.join('\n')}\n}\n`;
}

/** The filter input of each kind of query field (`where: { zone: { eq: "north" } }`). */
const FILTER_INPUTS: Readonly<Record<FieldKind | 'id', string>> = {
  id: 'IDFilter',
  enum: 'StringFilter',
  string: 'StringFilter',
  date: 'DateFilter',
  number: 'FloatFilter',
  timestamp: 'TimestampFilter',
};

const SHARED_QUERY_SDL = `${block('Sort direction of an `orderBy` key. Rows without the field come first ascending, last descending.')}
enum SortDirection {
  ASC
  DESC
}

${block('Equality on an id.')}
input IDFilter {
  eq: ID
  in: [ID!]
}

${block('Equality on a text field (enums and zones included).')}
input StringFilter {
  eq: String
  in: [String!]
}

${block('A calendar date `YYYY-MM-DD`: equality and ranges.')}
input DateFilter {
  eq: String
  in: [String!]
  gt: String
  gte: String
  lt: String
  lte: String
}

${block('A number: equality and ranges.')}
input FloatFilter {
  eq: Float
  in: [Float!]
  gt: Float
  gte: Float
  lt: Float
  lte: Float
}

${block('An ISO-8601 date-time with an offset or `Z`, compared as the instant it names: equality and ranges.')}
input TimestampFilter {
  eq: String
  in: [String!]
  gt: String
  gte: String
  lt: String
  lte: String
}

${block('The time buckets of an aggregate: hours, days, and weeks from Monday 00:00 UTC.')}
enum TimeBucket {
  HOUR
  DAY
  WEEK
}

${block('Where a page of a connection ends.')}
type PageInfo {
  hasNextPage: Boolean!
  ${block('Pass as `after` for the next page; null on an empty page.', '  ')}
  endCursor: String
}`;

/**
 * How deep `and`, `or` and `not` nest in a GraphQL filter: each level is its own input type
 * (`HenWhere`, `HenWhere2`, …; the last has no combinators). A recursive input type would make
 * graphql-jit unroll its variable coercion without end (minutes for one `$where: HenWhere`).
 */
export const WHERE_LEVELS = 2;

const whereName = (typeName: string, level: number): string =>
  level === 1 ? `${typeName}Where` : `${typeName}Where${level}`;

/** The filter, order and connection types of one entity. */
function queryTypesSdl(entity: EntityName): string {
  const { typeName, queryFields } = entities[entity];
  const fields = Object.entries({ id: 'id' as const, ...queryFields });
  const comparisons = fields.map(([field, kind]) => `  ${field}: ${FILTER_INPUTS[kind]}`).join('\n');
  const levels = Array.from({ length: WHERE_LEVELS }, (_, i) => {
    const level = i + 1;
    const inner = whereName(typeName, level + 1);
    const combinators =
      level < WHERE_LEVELS ? `  and: [${inner}!]\n  or: [${inner}!]\n  not: ${inner}\n` : '';
    return `${block(`A filter of ${entity} rows (nesting level ${level} of ${WHERE_LEVELS}): every field given holds${level < WHERE_LEVELS ? ', and so do `and`, `or` and `not`' : ''}. A comparison on a field a row lacks is false.`)}
input ${whereName(typeName, level)} {
${combinators}${comparisons}
}`;
  });
  return `${levels.join('\n\n')}

${block(`One sort key of ${entity} rows: exactly one field. Keys apply in list order; \`id\` ascending breaks ties.`)}
input ${typeName}OrderBy {
${fields.map(([field]) => `  ${field}: SortDirection`).join('\n')}
}

type ${typeName}Edge {
  ${block('Pass as `after` to start the next page after this row.', '  ')}
  cursor: String!
  node: ${typeName}!
}

${block(`A page of ${entity} rows with how many match in all.`)}
type ${typeName}Connection {
  nodes: [${typeName}!]!
  edges: [${typeName}Edge!]!
  pageInfo: PageInfo!
  ${block('How many rows match the filter, on every page.', '  ')}
  totalCount: Int!
}`;
}

/** An event's aggregate types: the fields it groups by, its numbers, one group. */
function aggregateTypesSdl(entity: EntityName): string {
  const { typeName, queryFields } = entities[entity];
  const groups = Object.entries(queryFields)
    .filter(([, kind]) => kind !== 'number' && kind !== 'timestamp')
    .map(([field]) => field);
  const numbers = Object.entries(queryFields)
    .filter(([, kind]) => kind === 'number')
    .map(([field]) => field);
  return `${block(`A field ${entity} rows can be grouped by.`)}
enum ${typeName}GroupField {
${groups.map((f) => `  ${f}`).join('\n')}
}

type ${typeName}Group {
${groups.map((f) => `  ${f}: String`).join('\n')}
}

type ${typeName}Numbers {
${numbers.map((f) => `  ${f}: Float`).join('\n')}
}

${block(`One group of ${entity} rows: its \`groupBy\` values (null: rows without the field), its time bucket, and its numbers.`)}
type ${typeName}Aggregate {
  group: ${typeName}Group!
  ${block('The start of the time bucket (ISO-8601, UTC), or null when not bucketed.', '  ')}
  bucket: String
  count: Int!
  ${block('Sums (0 over no values); min, max and avg are null over no values.', '  ')}
  sum: ${typeName}Numbers!
  min: ${typeName}Numbers!
  max: ${typeName}Numbers!
  avg: ${typeName}Numbers!
}`;
}

/** The arguments of a connection field. */
const connectionArgs = (typeName: string, at: boolean): string =>
  `where: ${typeName}Where, orderBy: [${typeName}OrderBy!], first: Int, after: String${at ? ', at: Float' : ''}`;

const connectionText = (entity: EntityName, limits: ListLimits): string =>
  `A page of ${entity} rows matching \`where\`, sorted by \`orderBy\` (then by id), \`first\` rows (default ${limits.defaultLimit}, 0..${limits.maxLimit}) after the cursor \`after\`, with \`totalCount\`. Cursors stay exact while rows are written between pages.`;

/**
 * The unified schema of `/graphql`: all 13 types with their 19 relations, and per entity a root field by
 * id (`farm`), a list (`farms`) and one list per filter (`farmsByZone`, `coopsByFarm`, …).
 */
export function unifiedSdl(limits: ListLimits, queryLimits?: QueryLimits): string {
  const fields: string[] = [];
  for (const entity of entityNames) {
    const { typeName, filters } = entities[entity];
    const names = unifiedNames(entity, filters);
    fields.push(
      block(`The ${entity} with this id, or null. ${AT_TEXT}`, '  '),
      `  ${names.single}(id: ID!, at: Float): ${typeName}`,
      block(`Every ${entity}. ${pageText(limits)} ${AT_TEXT}`, '  '),
      `  ${names.list}(${PAGE_ARGS}): [${typeName}!]`,
      block(`${connectionText(entity, limits)} ${AT_TEXT}`, '  '),
      `  ${names.connection}(${connectionArgs(typeName, true)}): ${typeName}Connection!`,
    );
    if (entities[entity].kind === 'event') {
      fields.push(
        block(
          `Groups of ${entity} rows matching \`where\` (e.g. a time range on \`timestamp\`), by the \`groupBy\` fields and by \`bucket\` of \`timestamp\`, in group order, each with its count and the sum, min, max and avg of its numbers. At most ${limits.maxLimit} groups, else \`EGGMESH_BAD_QUERY\`. ${AT_TEXT}`,
          '  ',
        ),
        `  ${names.aggregate}(where: ${typeName}Where, groupBy: [${typeName}GroupField!], bucket: TimeBucket, at: Float): [${typeName}Aggregate!]!`,
      );
    }
    for (const filter of filters) {
      fields.push(
        block(
          `The ${entity} rows whose \`${filter.field}\` equals \`${filter.argument}\`. ${pageText(limits)} ${AT_TEXT}`,
          '  ',
        ),
        `  ${names.filters.get(filter.query)}(${filterArgument(filter, true)}, ${PAGE_ARGS}): [${typeName}!]`,
      );
    }
  }
  const types = [
    ...entityNames.map((e) => typeSdl(e, limits, true)),
    SHARED_QUERY_SDL,
    ...entityNames.map(queryTypesSdl),
    ...entityNames.filter((e) => entities[e].kind === 'event').map(aggregateTypesSdl),
  ];
  const about = queryLimits
    ? `${block(
        `The egg economy, read side. A query nests at most ${queryLimits.maxDepth} fields deep, selects at most ${queryLimits.maxFields} fields with its fragments expanded, and may read about ${queryLimits.maxCost} rows as estimated before it runs: a root list counts its \`limit\`, a list relation its \`limit\` per parent row, a single relation 1. A response carries at most ${queryLimits.maxRows} rows. Send \`x-min-position: <x-log-position of a write>\` to read your own writes.`,
      )}\n`
    : '';
  return `${SAFE_INT_SDL}\n\n${types.join('\n\n')}\n\n${about}type Query {\n${fields.join('\n')}\n}\n`;
}
