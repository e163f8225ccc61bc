import { z } from 'zod';
import { consumerSchema, containerSchema, coopSchema, farmSchema, henSchema } from './entities/actors.js';
import {
  consumptionReportSchema,
  containerTransferSchema,
  layReportSchema,
  storageDepositSchema,
  storageWithdrawalSchema,
} from './entities/events.js';
import { containerInventorySchema, farmOutputSchema, henProductivitySchema } from './entities/projections.js';

export const entityNames = [
  'farm',
  'coop',
  'hen',
  'container',
  'consumer',
  'lay_report',
  'storage_deposit',
  'storage_withdrawal',
  'container_transfer',
  'consumption_report',
  'container_inventory',
  'hen_productivity',
  'farm_output',
] as const;

export type EntityName = (typeof entityNames)[number];

/** actor: created, updated and deleted by clients; event: facts reported by clients; projection: written by the projector only. */
export type EntityKind = 'actor' | 'event' | 'projection';

/** A `getBy…` query: rows whose `field` equals the query's `argument`. */
export interface FilterQuery {
  readonly query: string;
  readonly field: string;
  /** MeshQL keeps `id` as the argument name of FK filters. */
  readonly argument: 'id' | 'zone';
}

export interface ForeignKey {
  readonly field: string;
  readonly target: EntityName;
}

/**
 * How a queryable field compares and sorts: `id`, `enum` and `string` as text, `date` (`YYYY-MM-DD`)
 * as text, `number` numerically, `timestamp` as the instant it names (epoch ms), whatever offset the
 * client wrote it with.
 */
export type FieldKind = 'id' | 'enum' | 'string' | 'date' | 'number' | 'timestamp';

export interface EntityDefinition {
  readonly name: EntityName;
  /** GraphQL type name, e.g. `LayReport`. */
  readonly typeName: string;
  readonly kind: EntityKind;
  /** Validates a client payload (create/replace). Projections validate the document clients read. */
  readonly schema: z.ZodType<Record<string, unknown>>;
  readonly foreignKeys: readonly ForeignKey[];
  readonly filters: readonly FilterQuery[];
  /**
   * Fields clients may filter and sort lists by (`where`, `orderBy`), with how they compare. `id`
   * is always queryable and is not listed. A projection lists only fields its stored document holds
   * as clients read them (windowed counters such as `eggs_week` are computed at read time).
   */
  readonly queryFields: Readonly<Record<string, FieldKind>>;
  /** Fields every backend indexes: the `getBy…` fields and the query fields. */
  readonly indexedFields: readonly string[];
  /** For projections: the field naming the entity the document belongs to; the document's id equals it. */
  readonly projectionKey?: string;
}

/**
 * A relation resolves the `target` rows whose `targetField` equals the parent's `parentField`.
 * Singletons follow the parent's FK to the target's id; lists find the target rows pointing at the parent.
 */
export interface Relation {
  readonly parent: EntityName;
  readonly field: string;
  readonly kind: 'single' | 'list';
  readonly target: EntityName;
  readonly parentField: string;
  readonly targetField: string;
}

const fk = (field: string, target: EntityName): ForeignKey => ({ field, target });
const byId = (query: string, field: string): FilterQuery => ({ query, field, argument: 'id' });
const byZone: FilterQuery = { query: 'getByZone', field: 'zone', argument: 'zone' };

function define(
  name: EntityName,
  typeName: string,
  kind: EntityKind,
  schema: z.ZodType<Record<string, unknown>>,
  foreignKeys: ForeignKey[],
  filters: FilterQuery[],
  queryFields: Record<string, FieldKind>,
  projectionKey?: string,
): EntityDefinition {
  const indexedFields = [...new Set([...filters.map((f) => f.field), ...Object.keys(queryFields)])];
  return Object.freeze({
    name,
    typeName,
    kind,
    schema,
    foreignKeys: Object.freeze(foreignKeys),
    filters: Object.freeze(filters),
    queryFields: Object.freeze(queryFields),
    indexedFields: Object.freeze(indexedFields),
    ...(projectionKey ? { projectionKey } : {}),
  });
}

export const entities: Readonly<Record<EntityName, EntityDefinition>> = Object.freeze({
  farm: define('farm', 'Farm', 'actor', farmSchema, [], [byZone], { farm_type: 'enum', zone: 'string' }),
  coop: define('coop', 'Coop', 'actor', coopSchema, [fk('farm_id', 'farm')], [byId('getByFarm', 'farm_id')], {
    farm_id: 'id',
    coop_type: 'string',
    capacity: 'number',
  }),
  hen: define('hen', 'Hen', 'actor', henSchema, [fk('coop_id', 'coop')], [byId('getByCoop', 'coop_id')], {
    coop_id: 'id',
    breed: 'string',
    status: 'enum',
    dob: 'date',
  }),
  container: define('container', 'Container', 'actor', containerSchema, [], [byZone], {
    container_type: 'enum',
    zone: 'string',
    capacity: 'number',
  }),
  consumer: define('consumer', 'Consumer', 'actor', consumerSchema, [], [byZone], {
    consumer_type: 'enum',
    zone: 'string',
    weekly_demand: 'number',
  }),
  lay_report: define(
    'lay_report',
    'LayReport',
    'event',
    layReportSchema,
    [fk('hen_id', 'hen'), fk('coop_id', 'coop'), fk('farm_id', 'farm')],
    [byId('getByHen', 'hen_id'), byId('getByFarm', 'farm_id')],
    { hen_id: 'id', coop_id: 'id', farm_id: 'id', quality: 'enum', eggs: 'number', timestamp: 'timestamp' },
  ),
  storage_deposit: define(
    'storage_deposit',
    'StorageDeposit',
    'event',
    storageDepositSchema,
    [fk('container_id', 'container')],
    [byId('getByContainer', 'container_id')],
    { container_id: 'id', source_type: 'enum', source_id: 'id', eggs: 'number', timestamp: 'timestamp' },
  ),
  storage_withdrawal: define(
    'storage_withdrawal',
    'StorageWithdrawal',
    'event',
    storageWithdrawalSchema,
    [fk('container_id', 'container')],
    [byId('getByContainer', 'container_id')],
    { container_id: 'id', reason: 'enum', eggs: 'number', timestamp: 'timestamp' },
  ),
  container_transfer: define(
    'container_transfer',
    'ContainerTransfer',
    'event',
    containerTransferSchema,
    [fk('source_container_id', 'container'), fk('dest_container_id', 'container')],
    [byId('getBySourceContainer', 'source_container_id'), byId('getByDestContainer', 'dest_container_id')],
    {
      source_container_id: 'id',
      dest_container_id: 'id',
      transport_method: 'enum',
      eggs: 'number',
      timestamp: 'timestamp',
    },
  ),
  consumption_report: define(
    'consumption_report',
    'ConsumptionReport',
    'event',
    consumptionReportSchema,
    [fk('consumer_id', 'consumer'), fk('container_id', 'container')],
    [byId('getByConsumer', 'consumer_id'), byId('getByContainer', 'container_id')],
    { consumer_id: 'id', container_id: 'id', purpose: 'enum', eggs: 'number', timestamp: 'timestamp' },
  ),
  container_inventory: define(
    'container_inventory',
    'ContainerInventory',
    'projection',
    containerInventorySchema,
    [fk('container_id', 'container')],
    [byId('getByContainer', 'container_id')],
    { container_id: 'id', current_eggs: 'number', utilization_pct: 'number' },
    'container_id',
  ),
  hen_productivity: define(
    'hen_productivity',
    'HenProductivity',
    'projection',
    henProductivitySchema,
    [fk('hen_id', 'hen')],
    [byId('getByHen', 'hen_id')],
    { hen_id: 'id', farm_id: 'id', total_eggs: 'number' },
    'hen_id',
  ),
  farm_output: define(
    'farm_output',
    'FarmOutput',
    'projection',
    farmOutputSchema,
    [fk('farm_id', 'farm')],
    [byId('getByFarm', 'farm_id')],
    { farm_id: 'id', farm_type: 'string', active_hens: 'number', total_hens: 'number' },
    'farm_id',
  ),
});

const single = (parent: EntityName, field: string, target: EntityName, parentField: string): Relation => ({
  parent,
  field,
  kind: 'single',
  target,
  parentField,
  targetField: 'id',
});
const list = (parent: EntityName, field: string, target: EntityName, targetField: string): Relation => ({
  parent,
  field,
  kind: 'list',
  target,
  parentField: 'id',
  targetField,
});

/** The 19 relations of the MeshQL egg-economy example. */
export const relations: readonly Relation[] = Object.freeze([
  list('farm', 'coops', 'coop', 'farm_id'),
  list('farm', 'farmOutput', 'farm_output', 'farm_id'),
  single('coop', 'farm', 'farm', 'farm_id'),
  list('coop', 'hens', 'hen', 'coop_id'),
  single('hen', 'coop', 'coop', 'coop_id'),
  list('hen', 'layReports', 'lay_report', 'hen_id'),
  list('hen', 'productivity', 'hen_productivity', 'hen_id'),
  list('container', 'inventory', 'container_inventory', 'container_id'),
  list('consumer', 'consumptionReports', 'consumption_report', 'consumer_id'),
  single('lay_report', 'hen', 'hen', 'hen_id'),
  single('storage_deposit', 'container', 'container', 'container_id'),
  single('storage_withdrawal', 'container', 'container', 'container_id'),
  single('container_transfer', 'sourceContainer', 'container', 'source_container_id'),
  single('container_transfer', 'destContainer', 'container', 'dest_container_id'),
  single('consumption_report', 'consumer', 'consumer', 'consumer_id'),
  single('consumption_report', 'container', 'container', 'container_id'),
  single('container_inventory', 'container', 'container', 'container_id'),
  single('hen_productivity', 'hen', 'hen', 'hen_id'),
  single('farm_output', 'farm', 'farm', 'farm_id'),
]);

export function isEntityName(value: string): value is EntityName {
  return Object.hasOwn(entities, value);
}

export function relationsOf(parent: EntityName): Relation[] {
  return relations.filter((r) => r.parent === parent);
}

/** A JSON Schema type used by GraphQL and OpenAPI generation. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  [key: string]: unknown;
}

const jsonSchemaCache = new Map<string, JsonSchema>();

/**
 * JSON Schema (draft 2020-12) of an entity.
 * `input`: what a client sends (`id` optional); `record`: what the API returns (`id` always present).
 */
export function jsonSchemaOf(name: EntityName, mode: 'input' | 'record' = 'record'): JsonSchema {
  const key = `${name}:${mode}`;
  const cached = jsonSchemaCache.get(key);
  if (cached) return structuredClone(cached);
  const schema = z.toJSONSchema(entities[name].schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete schema.$schema;
  if (mode === 'record') {
    const required = new Set(schema.required ?? []);
    required.add('id');
    schema.required = [...required];
  }
  jsonSchemaCache.set(key, schema);
  return structuredClone(schema);
}
