import { type EntityName, entities, type FieldKind } from '@eggmesh/schema';
import { StoreError, storeErrorCodes } from './errors.js';
import type { ReadOptions, StoredRecord } from './types.js';

/** A value a condition compares with: text for ids, enums, strings, dates and timestamps; a number for numbers. */
export type Scalar = string | number;

/** The comparisons of one field; several in one object all hold (`{ gte: 1, lt: 5 }`). */
export interface FieldCondition {
  readonly eq?: Scalar | undefined;
  readonly in?: readonly Scalar[] | undefined;
  readonly gt?: Scalar | undefined;
  readonly gte?: Scalar | undefined;
  readonly lt?: Scalar | undefined;
  readonly lte?: Scalar | undefined;
}

/**
 * A filter as clients write it: one key per field (`{ zone: { eq: 'north' } }`), and `and`, `or`,
 * `not` to combine filters. All keys of one object hold together. A comparison on a field a row
 * does not have is false (so `not` of it is true).
 */
export interface Where {
  readonly and?: readonly Where[] | undefined;
  readonly or?: readonly Where[] | undefined;
  readonly not?: Where | undefined;
  readonly [field: string]: FieldCondition | readonly Where[] | Where | undefined;
}

export type Direction = 'ASC' | 'DESC';

/** One sort key. Missing values sort before every value ascending, after every value descending. */
export interface OrderBy {
  readonly field: string;
  readonly direction: Direction;
}

export interface QueryOptions extends ReadOptions {
  readonly where?: Where | undefined;
  /** Sort keys in order; `id` ascending always ends the order (the tie-break). */
  readonly orderBy?: readonly OrderBy[] | undefined;
  /** At most this many rows. */
  readonly first: number;
  /** A cursor from an earlier page of the same query: the rows after that row. */
  readonly after?: string | undefined;
  /** Whether to count every matching row (default true); a count reads the whole match. */
  readonly count?: boolean | undefined;
}

export interface QueryPage {
  readonly records: StoredRecord[];
  /** How many rows match the filter (every page, not just this one); undefined when not asked for. */
  readonly totalCount: number | undefined;
  /** The cursor of each record, in order. */
  readonly cursors: string[];
  readonly hasNextPage: boolean;
}

export type Comparison = 'eq' | 'in' | 'gt' | 'gte' | 'lt' | 'lte';

/** A filter checked against the catalogue, with timestamps as epoch ms: what adapters compile. */
export type Condition =
  | { readonly op: 'and' | 'or'; readonly of: readonly Condition[] }
  | { readonly op: 'not'; readonly of: Condition }
  | {
      readonly op: Comparison;
      readonly field: string;
      readonly kind: FieldKind | 'id';
      readonly value: Scalar | readonly Scalar[];
    };

/** A sort key checked against the catalogue; `id` ascending is always last. */
export interface SortKey {
  readonly field: string;
  readonly kind: FieldKind | 'id';
  readonly direction: Direction;
}

/** A value of the sort key of a row (null: the row has none). */
export type KeyValue = Scalar | null;

/** A query the adapters run: checked, normalized, its cursor decoded. */
export interface PlannedQuery {
  readonly entity: EntityName;
  readonly where: Condition;
  readonly sort: readonly SortKey[];
  readonly first: number;
  /** The sort key values of the row the page starts after (one per sort key, id last). */
  readonly after: readonly KeyValue[] | undefined;
  readonly at: number | undefined;
  readonly count: boolean;
}

const comparisons: readonly Comparison[] = ['eq', 'in', 'gt', 'gte', 'lt', 'lte'];
const ranges = new Set<Comparison>(['gt', 'gte', 'lt', 'lte']);

const invalid = (message: string, entity: EntityName): StoreError =>
  new StoreError(storeErrorCodes.INVALID_QUERY, message, { entity });

/** The kind of a queryable field of `entity` (`id` for the id), or an INVALID_QUERY error. */
export function fieldKind(entity: EntityName, field: string): FieldKind | 'id' {
  if (field === 'id') return 'id';
  const kind = Object.hasOwn(entities[entity].queryFields, field)
    ? entities[entity].queryFields[field]
    : undefined;
  if (!kind) throw invalid(`${entity} cannot be filtered or sorted by ${field}`, entity);
  return kind;
}

/** A timestamp as epoch ms; a value of another kind as it is, after checking its type. */
function normalizeValue(entity: EntityName, field: string, kind: FieldKind | 'id', value: unknown): Scalar {
  if (kind === 'number') {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw invalid(`${entity}.${field} compares with numbers`, entity);
    }
    return value;
  }
  if (typeof value !== 'string') throw invalid(`${entity}.${field} compares with text`, entity);
  if (kind === 'timestamp') {
    const ms = Date.parse(value);
    if (!Number.isFinite(ms) || !/^\d{4}-\d\d-\d\dT/.test(value)) {
      throw invalid(
        `${entity}.${field} compares with ISO-8601 date-times, not ${JSON.stringify(value)}`,
        entity,
      );
    }
    return ms;
  }
  return value;
}

/** Most values one `in` may list. */
export const MAX_IN_VALUES = 500;
/** Deepest nesting of and/or/not. */
export const MAX_WHERE_DEPTH = 8;

function condition(entity: EntityName, where: Where | undefined, depth: number): Condition {
  if (depth > MAX_WHERE_DEPTH) throw invalid(`a filter nests deeper than ${MAX_WHERE_DEPTH}`, entity);
  const all: Condition[] = [];
  for (const [key, value] of Object.entries(where ?? {})) {
    if (value === undefined || value === null) continue;
    if (key === 'and' || key === 'or') {
      const list = value as readonly Where[];
      if (!Array.isArray(list)) throw invalid(`${key} takes a list of filters`, entity);
      all.push({ op: key, of: list.map((w) => condition(entity, w, depth + 1)) });
      continue;
    }
    if (key === 'not') {
      all.push({ op: 'not', of: condition(entity, value as Where, depth + 1) });
      continue;
    }
    const kind = fieldKind(entity, key);
    for (const [op, operand] of Object.entries(value as FieldCondition)) {
      if (operand === undefined || operand === null) continue;
      if (!comparisons.includes(op as Comparison))
        throw invalid(`unknown comparison ${op} on ${key}`, entity);
      if (ranges.has(op as Comparison) && kind !== 'number' && kind !== 'timestamp' && kind !== 'date') {
        throw invalid(`${entity}.${key} takes eq and in, not ranges`, entity);
      }
      if (op === 'in') {
        if (!Array.isArray(operand)) throw invalid(`in on ${key} takes a list`, entity);
        if (operand.length > MAX_IN_VALUES) throw invalid(`in takes at most ${MAX_IN_VALUES} values`, entity);
        const values = operand.map((v: unknown) => normalizeValue(entity, key, kind, v));
        all.push({ op: 'in', field: key, kind, value: values });
      } else {
        all.push({
          op: op as Comparison,
          field: key,
          kind,
          value: normalizeValue(entity, key, kind, operand),
        });
      }
    }
  }
  return all.length === 1 ? (all[0] as Condition) : { op: 'and', of: all };
}

/** The sort keys of `orderBy`, ending with `id` ascending (dropped from `orderBy` where it is repeated). */
export function sortKeys(entity: EntityName, orderBy: readonly OrderBy[] | undefined): SortKey[] {
  const keys: SortKey[] = [];
  for (const { field, direction } of orderBy ?? []) {
    if (direction !== 'ASC' && direction !== 'DESC') throw invalid(`sort direction ${direction}`, entity);
    const kind = fieldKind(entity, field);
    if (field === 'id') {
      keys.push({ field, kind, direction });
      return keys;
    }
    if (keys.some((k) => k.field === field)) throw invalid(`${field} is sorted by twice`, entity);
    keys.push({ field, kind, direction });
  }
  keys.push({ field: 'id', kind: 'id', direction: 'ASC' });
  return keys;
}

/** The value of a sort or filter field of a row, as adapters compare it (timestamps as epoch ms). */
export function keyValue(record: StoredRecord, field: string, kind: FieldKind | 'id'): KeyValue {
  if (field === 'id') return record.id;
  const value = record.payload[field];
  if (value === undefined || value === null) return null;
  if (kind === 'timestamp') return Date.parse(value as string);
  return value as Scalar;
}

/** An opaque cursor: the sort key values of a row (with its id), base64url JSON. */
export function encodeCursor(sort: readonly SortKey[], record: StoredRecord): string {
  const values = sort.map((k) => keyValue(record, k.field, k.kind));
  return Buffer.from(
    JSON.stringify([sort.map((k) => `${k.field}:${k.direction}`).join(','), values]),
  ).toString('base64url');
}

function decodeCursor(entity: EntityName, sort: readonly SortKey[], cursor: string): KeyValue[] {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('after is not a cursor of this list', entity);
  }
  const signature = sort.map((k) => `${k.field}:${k.direction}`).join(',');
  if (
    !Array.isArray(decoded) ||
    decoded[0] !== signature ||
    !Array.isArray(decoded[1]) ||
    decoded[1].length !== sort.length
  ) {
    throw invalid('after is a cursor of another order or list', entity);
  }
  const values = decoded[1] as unknown[];
  sort.forEach((k, i) => {
    const v = values[i];
    const ok =
      (v === null && k.field !== 'id') ||
      (k.kind === 'number' || k.kind === 'timestamp' ? typeof v === 'number' : typeof v === 'string');
    if (!ok) throw invalid('after is not a cursor of this list', entity);
  });
  return values as KeyValue[];
}

/**
 * Checks a query against the catalogue and decodes its cursor: every adapter runs the result. The
 * page size is the caller's to bound (EGGMESH_LIST_MAX_LIMIT on the read-api and REST).
 */
export function planQuery(entity: EntityName, options: QueryOptions): PlannedQuery {
  if (!Number.isSafeInteger(options.first) || options.first < 0) {
    throw invalid('first takes a whole number of rows, 0 or more', entity);
  }
  const sort = sortKeys(entity, options.orderBy);
  return {
    entity,
    where: condition(entity, options.where, 0),
    sort,
    first: options.first,
    after: options.after === undefined ? undefined : decodeCursor(entity, sort, options.after),
    at: options.at,
    count: options.count ?? true,
  };
}

/** `a` before `b` in the order of one key: missing values first ascending, last descending. */
export function compareKey(a: KeyValue, b: KeyValue, direction: Direction): number {
  const raw = a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1;
  return direction === 'ASC' ? raw : -raw;
}

/** Whether a row matches a planned filter: the reference semantics every adapter's compilation follows. */
export function matches(record: StoredRecord, where: Condition): boolean {
  switch (where.op) {
    case 'and':
      return where.of.every((c) => matches(record, c));
    case 'or':
      return where.of.some((c) => matches(record, c));
    case 'not':
      return !matches(record, where.of);
    default: {
      const value = keyValue(record, where.field, where.kind);
      if (value === null) return false;
      const operand = where.value;
      if (where.op === 'in') return (operand as readonly Scalar[]).includes(value);
      if (typeof value !== typeof operand) return false;
      const other = operand as Scalar;
      return where.op === 'eq'
        ? value === other
        : where.op === 'gt'
          ? value > other
          : where.op === 'gte'
            ? value >= other
            : where.op === 'lt'
              ? value < other
              : value <= other;
    }
  }
}

/**
 * A query answered over rows in memory: the reference the contract and property tests compare the
 * adapters with (never the serving path: adapters compile the query for their storage).
 */
export function queryInMemory(rows: readonly StoredRecord[], plan: PlannedQuery): QueryPage {
  const order = (a: StoredRecord, b: StoredRecord): number => {
    for (const k of plan.sort) {
      const c = compareKey(keyValue(a, k.field, k.kind), keyValue(b, k.field, k.kind), k.direction);
      if (c !== 0) return c;
    }
    return 0;
  };
  const matching = rows.filter((r) => matches(r, plan.where)).sort(order);
  const after = plan.after;
  const rest = after
    ? matching.filter((r) => {
        for (const [i, k] of plan.sort.entries()) {
          const c = compareKey(keyValue(r, k.field, k.kind), after[i] as KeyValue, k.direction);
          if (c !== 0) return c > 0;
        }
        return false;
      })
    : matching;
  const records = rest.slice(0, plan.first);
  return {
    records,
    totalCount: plan.count ? matching.length : undefined,
    cursors: records.map((r) => encodeCursor(plan.sort, r)),
    hasNextPage: rest.length > records.length,
  };
}

/** Time buckets of an aggregate: hours, days, and weeks starting Monday 00:00 UTC. */
export type BucketUnit = 'hour' | 'day' | 'week';

export const bucketSizes: Readonly<Record<BucketUnit, number>> = {
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
};

/** Where buckets start, as an offset from the epoch: 1970-01-05 was a Monday. */
export const bucketOffsets: Readonly<Record<BucketUnit, number>> = { hour: 0, day: 0, week: 4 * 86_400_000 };

/** The start (epoch ms) of the bucket holding `ms`. */
export function bucketStart(ms: number, unit: BucketUnit): number {
  const size = bucketSizes[unit];
  return ms - ((((ms - bucketOffsets[unit]) % size) + size) % size);
}

export interface AggregateOptions extends ReadOptions {
  readonly where?: Where | undefined;
  /** Text fields (ids, enums, strings, dates) whose values form the groups. */
  readonly groupBy?: readonly string[] | undefined;
  /** Also groups by the time bucket of a timestamp field. */
  readonly bucket?: { readonly field: string; readonly unit: BucketUnit } | undefined;
  /** The numeric fields whose sum, min, max and avg every group carries (count always). */
  readonly fields?: readonly string[] | undefined;
  /** At most this many groups; more is INVALID_QUERY (narrow the filter). */
  readonly maxGroups: number;
}

export interface AggregateGroup {
  /** The group's value of each `groupBy` field (null: rows without it). */
  readonly keys: Readonly<Record<string, string | null>>;
  /** The bucket's start (epoch ms) when bucketed. */
  readonly bucket: number | null;
  readonly count: number;
  /** Per field: its sum (0 over no values), min, max and avg (null over no values). */
  readonly sum: Readonly<Record<string, number>>;
  readonly min: Readonly<Record<string, number | null>>;
  readonly max: Readonly<Record<string, number | null>>;
  readonly avg: Readonly<Record<string, number | null>>;
}

export interface PlannedAggregate {
  readonly entity: EntityName;
  readonly where: Condition;
  readonly groupBy: readonly string[];
  readonly bucket: { readonly field: string; readonly unit: BucketUnit } | undefined;
  readonly fields: readonly string[];
  readonly maxGroups: number;
  readonly at: number | undefined;
}

/** Checks an aggregate against the catalogue: events only, groups on text fields, sums on numbers. */
export function planAggregate(entity: EntityName, options: AggregateOptions): PlannedAggregate {
  if (entities[entity].kind !== 'event')
    throw invalid(`aggregates are over events; ${entity} is not one`, entity);
  const groupBy = [...new Set(options.groupBy ?? [])];
  for (const field of groupBy) {
    const kind = fieldKind(entity, field);
    if (kind === 'number' || kind === 'timestamp') {
      throw invalid(`${entity} groups by text fields; ${field} is a ${kind} (bucket timestamps)`, entity);
    }
  }
  const fields = [...new Set(options.fields ?? [])];
  for (const field of fields) {
    if (fieldKind(entity, field) !== 'number') throw invalid(`${entity}.${field} is not a number`, entity);
  }
  if (options.bucket) {
    if (fieldKind(entity, options.bucket.field) !== 'timestamp') {
      throw invalid(`${entity}.${options.bucket.field} is not a timestamp`, entity);
    }
    if (!Object.hasOwn(bucketSizes, options.bucket.unit))
      throw invalid(`unknown bucket ${options.bucket.unit}`, entity);
  }
  return {
    entity,
    where: condition(entity, options.where, 0),
    groupBy,
    bucket: options.bucket,
    fields,
    maxGroups: options.maxGroups,
    at: options.at,
  };
}

/** Too many groups for one answer. */
export const tooManyGroups = (plan: PlannedAggregate): StoreError =>
  invalid(`the aggregate has more than ${plan.maxGroups} groups: narrow where or group by less`, plan.entity);

/** Groups in key order (missing keys first), then bucket order. */
export function compareGroups(plan: PlannedAggregate, a: AggregateGroup, b: AggregateGroup): number {
  for (const field of plan.groupBy) {
    const c = compareKey(a.keys[field] ?? null, b.keys[field] ?? null, 'ASC');
    if (c !== 0) return c;
  }
  return compareKey(a.bucket, b.bucket, 'ASC');
}

/** An aggregate over rows in memory: the reference the contract and property tests compare adapters with. */
export function aggregateInMemory(rows: readonly StoredRecord[], plan: PlannedAggregate): AggregateGroup[] {
  const groups = new Map<
    string,
    { keys: Record<string, string | null>; bucket: number | null; rows: StoredRecord[] }
  >();
  for (const row of rows) {
    if (!matches(row, plan.where)) continue;
    const keys = Object.fromEntries(
      plan.groupBy.map((f) => [f, (row.payload[f] as string | undefined) ?? null]),
    );
    const ms = plan.bucket ? keyValue(row, plan.bucket.field, 'timestamp') : null;
    const bucket = plan.bucket && ms !== null ? bucketStart(ms as number, plan.bucket.unit) : null;
    const key = JSON.stringify([keys, bucket]);
    const group = groups.get(key) ?? { keys, bucket, rows: [] };
    group.rows.push(row);
    groups.set(key, group);
  }
  const out = [...groups.values()].map(({ keys, bucket, rows: members }) => {
    const values = (f: string) =>
      members.map((r) => r.payload[f]).filter((v): v is number => typeof v === 'number');
    const per = (fn: (v: number[]) => number | null) =>
      Object.fromEntries(plan.fields.map((f) => [f, fn(values(f))]));
    return {
      keys,
      bucket,
      count: members.length,
      sum: per((v) => v.reduce((s, x) => s + x, 0)) as Record<string, number>,
      min: per((v) => (v.length ? Math.min(...v) : null)),
      max: per((v) => (v.length ? Math.max(...v) : null)),
      avg: per((v) => (v.length ? v.reduce((s, x) => s + x, 0) / v.length : null)),
    };
  });
  if (out.length > plan.maxGroups) throw tooManyGroups(plan);
  return out.sort((a, b) => compareGroups(plan, a, b));
}
