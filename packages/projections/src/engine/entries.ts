import {
  type ConsumptionReport,
  type Container,
  type ContainerTransfer,
  type Coop,
  type EntityName,
  eggQualities,
  type Farm,
  farmTypes,
  type Hen,
  henStatuses,
  type LayReport,
  type StorageDeposit,
  type StorageWithdrawal,
} from '@eggmesh/schema';

/**
 * A log entry as the store hands it over (structurally the store's `LogEntry`; this package does
 * not depend on the store).
 */
export interface RawLogEntry {
  readonly position: number;
  readonly entity: EntityName;
  readonly id: string;
  readonly op: 'create' | 'update' | 'delete';
  readonly payload: Record<string, unknown> | null;
  readonly previous: Record<string, unknown> | null;
  readonly createdAt: number;
}

/** The fields `K` of an entity type `T`, each present only when its stored value has `T`'s type. */
export type Decoded<T, K extends keyof T> = { readonly [P in K]?: T[P] };

/**
 * What the projection rules read of each payload, typed from the schema's zod-inferred entity types.
 * Only these fields are decoded: checking whole payloads with zod would cost more than the rest of
 * the projector together (the write-api validated them on the way in).
 */
export interface RulePayloads {
  readonly farm: Decoded<Farm, 'farm_type'>;
  readonly coop: Decoded<Coop, 'farm_id'>;
  readonly hen: Decoded<Hen, 'coop_id' | 'status'>;
  readonly container: Decoded<Container, 'capacity'>;
  readonly consumer: Decoded<Record<never, never>, never>;
  readonly lay_report: Decoded<LayReport, 'hen_id' | 'farm_id' | 'eggs' | 'timestamp' | 'quality'>;
  readonly storage_deposit: Decoded<StorageDeposit, 'container_id' | 'eggs'>;
  readonly storage_withdrawal: Decoded<StorageWithdrawal, 'container_id' | 'eggs'>;
  readonly container_transfer: Decoded<
    ContainerTransfer,
    'source_container_id' | 'dest_container_id' | 'eggs'
  >;
  readonly consumption_report: Decoded<ConsumptionReport, 'container_id' | 'eggs'>;
}

/** The entities whose changes the projector folds (the projections themselves are never in the log). */
export type LoggedEntity = keyof RulePayloads;

/** One log entry with its payloads decoded for the rules: a discriminated union on `entity`. */
export type TypedLogEntry = {
  readonly [E in LoggedEntity]: {
    readonly position: number;
    readonly entity: E;
    readonly id: string;
    readonly op: 'create' | 'update' | 'delete';
    /** The new payload (`null` for a delete). */
    readonly payload: RulePayloads[E] | null;
    /** The payload this change replaced (`null` for a create). */
    readonly previous: RulePayloads[E] | null;
    readonly createdAt: number;
  };
}[LoggedEntity];

type Payload = Record<string, unknown>;

/** A non-empty string (ids, timestamps), or absent. */
const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** A finite number (egg counts, capacities), or absent. */
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** One of `options`, or absent. */
const oneOf = <T extends string>(options: readonly T[], value: unknown): T | undefined =>
  options.find((option) => option === value);

const decoders: { readonly [E in LoggedEntity]: (p: Payload) => RulePayloads[E] } = {
  farm: (p) => ({ farm_type: oneOf(farmTypes, p.farm_type) }),
  coop: (p) => ({ farm_id: text(p.farm_id) }),
  hen: (p) => ({ coop_id: text(p.coop_id), status: oneOf(henStatuses, p.status) }),
  container: (p) => ({ capacity: num(p.capacity) }),
  consumer: () => ({}),
  lay_report: (p) => ({
    hen_id: text(p.hen_id),
    farm_id: text(p.farm_id),
    eggs: num(p.eggs),
    timestamp: text(p.timestamp),
    quality: oneOf(eggQualities, p.quality),
  }),
  storage_deposit: (p) => ({ container_id: text(p.container_id), eggs: num(p.eggs) }),
  storage_withdrawal: (p) => ({ container_id: text(p.container_id), eggs: num(p.eggs) }),
  container_transfer: (p) => ({
    source_container_id: text(p.source_container_id),
    dest_container_id: text(p.dest_container_id),
    eggs: num(p.eggs),
  }),
  consumption_report: (p) => ({ container_id: text(p.container_id), eggs: num(p.eggs) }),
};

function typed<E extends LoggedEntity>(entity: E, entry: RawLogEntry) {
  const decode = decoders[entity];
  return {
    position: entry.position,
    entity,
    id: entry.id,
    op: entry.op,
    payload: entry.payload === null ? null : decode(entry.payload),
    previous: entry.previous === null ? null : decode(entry.previous),
    createdAt: entry.createdAt,
  };
}

/**
 * Decodes a log entry for the rules: each field the rules read is checked against its schema type
 * and left out when it does not match (a payload the write-api accepted always matches). Entries of
 * the projection entities, which the log never holds, give `null`.
 */
export function decodeEntry(entry: RawLogEntry): TypedLogEntry | null {
  switch (entry.entity) {
    case 'farm':
      return typed('farm', entry);
    case 'coop':
      return typed('coop', entry);
    case 'hen':
      return typed('hen', entry);
    case 'container':
      return typed('container', entry);
    case 'consumer':
      return typed('consumer', entry);
    case 'lay_report':
      return typed('lay_report', entry);
    case 'storage_deposit':
      return typed('storage_deposit', entry);
    case 'storage_withdrawal':
      return typed('storage_withdrawal', entry);
    case 'container_transfer':
      return typed('container_transfer', entry);
    case 'consumption_report':
      return typed('consumption_report', entry);
    default:
      // The projection entities: the log never holds them.
      return null;
  }
}
