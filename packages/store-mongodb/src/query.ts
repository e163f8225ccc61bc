import type { EntityName } from '@eggmesh/schema';
import {
  type AggregateGroup,
  bucketOffsets,
  bucketSizes,
  type Condition,
  encodeCursor,
  fieldKind,
  type KeyValue,
  type PlannedAggregate,
  type PlannedQuery,
  type QueryPage,
  StoreError,
  storeErrorCodes,
  tooManyGroups,
} from '@eggmesh/store';
import { type Collection, type Db, type Document, type MongoClient, MongoServerError } from 'mongodb';
import type { CurrentDoc, VersionDoc } from './reader.js';

/**
 * Where a query field lives in the documents a query pipeline matches: the id is `_id`; a timestamp
 * is compared as the instant it names, computed into `_k` (clients write timestamps with any offset,
 * so their text does not sort in time); every other field is read from the payload.
 */
function pathOf(plan: { readonly entity: EntityName }, field: string): string {
  if (field === 'id') return '_id';
  return fieldKind(plan.entity, field) === 'timestamp' ? `_k.${field}` : `payload.${field}`;
}

/** The fields a condition compares. */
function fieldsOf(where: Condition, out: Set<string>): Set<string> {
  switch (where.op) {
    case 'and':
    case 'or':
      for (const c of where.of) fieldsOf(c, out);
      return out;
    case 'not':
      return fieldsOf(where.of, out);
    default:
      out.add(where.field);
      return out;
  }
}

/** Timestamp fields the query compares or sorts by. */
function timestampFields(plan: PlannedQuery): string[] {
  const fields = fieldsOf(plan.where, new Set(plan.sort.map((k) => k.field)));
  return [...fields].filter((f) => f !== 'id' && fieldKind(plan.entity, f) === 'timestamp');
}

/** Matches nothing (MongoDB refuses an empty `$or`). */
const NOTHING: Document = { $nor: [{}] };

/** A planned condition as a MongoDB filter; a comparison on a missing field is false, `$nor` negates. */
export function compileFilter(plan: { readonly entity: EntityName }, where: Condition): Document {
  switch (where.op) {
    case 'and':
      return where.of.length === 0 ? {} : { $and: where.of.map((c) => compileFilter(plan, c)) };
    case 'or':
      return where.of.length === 0 ? NOTHING : { $or: where.of.map((c) => compileFilter(plan, c)) };
    case 'not':
      return { $nor: [compileFilter(plan, where.of)] };
    default:
      return { [pathOf(plan, where.field)]: { [`$${where.op}`]: where.value } };
  }
}

/** The rows after the cursor's row in the query's order (missing values first ascending, last descending). */
function compileSeek(plan: PlannedQuery): Document {
  const after = plan.after as readonly KeyValue[];
  const terms: Document[] = [];
  plan.sort.forEach((key, i) => {
    const parts: Document[] = [];
    for (let j = 0; j < i; j++) {
      const earlier = plan.sort[j] as { field: string };
      parts.push({ [pathOf(plan, earlier.field)]: after[j] ?? null });
    }
    const path = pathOf(plan, key.field);
    const value = after[i] as KeyValue;
    if (key.direction === 'ASC') {
      parts.push(value === null ? { [path]: { $ne: null } } : { [path]: { $gt: value } });
    } else if (value === null) {
      return;
    } else {
      parts.push({ $or: [{ [path]: { $lt: value } }, { [path]: null }] });
    }
    terms.push({ $and: parts });
  });
  return terms.length === 0 ? NOTHING : { $or: terms };
}

/**
 * The stages that give the documents a query filters: the live current documents, or at a time the
 * newest version of each id (shaped like a current document) when it is live; then the instants of
 * the timestamps the query uses.
 */
function sourceStages(plan: { readonly at: number | undefined }, timestamps: readonly string[]): Document[] {
  const stages: Document[] =
    plan.at === undefined
      ? [{ $match: { deleted: false } }]
      : [
          { $match: { created_at: { $lte: plan.at } } },
          { $sort: { id: 1, created_at: -1 } },
          {
            $group: {
              _id: '$id',
              created_at: { $first: '$created_at' },
              deleted: { $first: '$deleted' },
              payload: { $first: '$payload' },
            },
          },
          { $match: { deleted: false } },
        ];
  if (timestamps.length > 0) {
    // A nested document, not dotted keys: the test server takes `_k.f` in $addFields as a field name.
    stages.push({
      $addFields: {
        _k: Object.fromEntries(timestamps.map((f) => [f, { $toLong: { $toDate: `$payload.${f}` } }])),
      },
    });
  }
  return stages;
}

/** NotImplemented: the server parsed the pipeline and lacks one of its operators. */
const NOT_IMPLEMENTED = 238;

/**
 * The aggregation expressions a query at a past time, a timestamp order or range and an aggregate
 * need: `$toDate`/`$toLong` (a timestamp's instant), `$first` (the newest version of an id),
 * `$min`/`$max`/`$avg` and arithmetic for time buckets. MongoDB and the emulator evaluate them;
 * FerretDB 1.x implements none of them in `$group`/`$addFields` (and its `$sum` of a field answers 0),
 * so on such a server these queries are refused rather than answered wrong. Asked once per client
 * (a request's session-bound view of a `Db` shares its client's answer) with a pipeline that reads
 * nothing: a server lacking an operator refuses it while parsing.
 */
const expressionSupport = new WeakMap<MongoClient, Promise<boolean>>();

export function hasAggregationExpressions(db: Db): Promise<boolean> {
  let known = expressionSupport.get(db.client);
  if (!known) {
    const probe = [
      { $match: { _id: { $exists: false } } },
      {
        $addFields: {
          t: { $toLong: { $toDate: '$created_at' } },
          b: { $subtract: ['$created_at', { $mod: [{ $add: ['$created_at', 1] }, 2] }] },
        },
      },
      {
        $group: {
          _id: '$b',
          f: { $first: '$t' },
          n: { $min: '$t' },
          x: { $max: '$t' },
          a: { $avg: '$t' },
          s: { $sum: '$t' },
        },
      },
    ];
    known = db
      .collection('eggmesh_capability_probe')
      .aggregate(probe)
      .toArray()
      .then(
        () => true,
        (error: unknown) => {
          if (error instanceof MongoServerError && error.code === NOT_IMPLEMENTED) return false;
          throw error;
        },
      );
    // A failed probe (the server unreachable) is asked again next time.
    known.catch(() => expressionSupport.delete(db.client));
    expressionSupport.set(db.client, known);
  }
  return known;
}

/** The refusal of a query the server cannot answer correctly (see `hasAggregationExpressions`). */
function unsupported(entity: EntityName, what: string): StoreError {
  return new StoreError(
    storeErrorCodes.INVALID_QUERY,
    `${what} needs aggregation expressions ($toDate, $first, $min, $max, $avg, $subtract, $mod) that this MongoDB-wire server (FerretDB 1.x) does not implement; run the read side on MongoDB for it`,
    { entity },
  );
}

/** Runs a planned query as two aggregations (the page, one row more; the count) on the collection it reads. */
export async function runQuery(
  plan: PlannedQuery,
  collections: { current: Collection<CurrentDoc>; versions: Collection<VersionDoc> },
  expressions: boolean,
): Promise<QueryPage> {
  if (!expressions) {
    if (plan.at !== undefined) throw unsupported(plan.entity, 'a query at a past time');
    const timestamps = timestampFields(plan);
    if (timestamps.length > 0) {
      throw unsupported(plan.entity, `a query filtering or sorting on ${timestamps.join(', ')}`);
    }
  }
  const collection = (plan.at === undefined
    ? collections.current
    : collections.versions) as unknown as Collection;
  const filtered = [
    ...sourceStages(plan, timestampFields(plan)),
    { $match: compileFilter(plan, plan.where) },
  ];
  const sort = Object.fromEntries(
    plan.sort.map((k) => [pathOf(plan, k.field), k.direction === 'ASC' ? 1 : -1]),
  );
  const page = [
    ...filtered,
    ...(plan.after ? [{ $match: compileSeek(plan) }] : []),
    { $sort: sort },
    { $limit: plan.first + 1 },
  ];
  const [docs, counted] = await Promise.all([
    collection.aggregate<CurrentDoc>(page).toArray(),
    plan.count ? collection.aggregate<{ n: number }>([...filtered, { $count: 'n' }]).toArray() : undefined,
  ]);
  const records = docs
    .slice(0, plan.first)
    .map((doc) => ({ id: doc._id, createdAt: doc.created_at, payload: doc.payload ?? {} }));
  return {
    records,
    totalCount: counted ? (counted[0]?.n ?? 0) : undefined,
    cursors: records.map((r) => encodeCursor(plan.sort, r)),
    hasNextPage: docs.length > plan.first,
  };
}

/** Runs a planned aggregate as one pipeline ending in $group and $sort, at most maxGroups + 1 groups read. */
export async function runAggregate(
  plan: PlannedAggregate,
  collections: { current: Collection<CurrentDoc>; versions: Collection<VersionDoc> },
  expressions: boolean,
): Promise<AggregateGroup[]> {
  if (!expressions) throw unsupported(plan.entity, 'an aggregate');
  const collection = (plan.at === undefined
    ? collections.current
    : collections.versions) as unknown as Collection;
  const timestamps = [...fieldsOf(plan.where, new Set(plan.bucket ? [plan.bucket.field] : []))].filter(
    (f) => f !== 'id' && fieldKind(plan.entity, f) === 'timestamp',
  );
  const id: Document = Object.fromEntries(plan.groupBy.map((f, i) => [`g${i}`, `$${pathOf(plan, f)}`]));
  if (plan.bucket) {
    const t = `$${pathOf(plan, plan.bucket.field)}`;
    const size = bucketSizes[plan.bucket.unit];
    const offset = bucketOffsets[plan.bucket.unit];
    id.b = {
      $subtract: [t, { $mod: [{ $add: [{ $mod: [{ $subtract: [t, offset] }, size] }, size] }, size] }],
    };
  }
  const accumulators: Document = { count: { $sum: 1 } };
  plan.fields.forEach((f, i) => {
    const value = `$payload.${f}`;
    accumulators[`s${i}`] = { $sum: value };
    accumulators[`n${i}`] = { $min: value };
    accumulators[`x${i}`] = { $max: value };
    accumulators[`a${i}`] = { $avg: value };
  });
  const sort: Document = Object.fromEntries(plan.groupBy.map((_, i) => [`_id.g${i}`, 1]));
  if (plan.bucket) sort['_id.b'] = 1;
  const docs = await collection
    .aggregate<Document>([
      ...sourceStages(plan, timestamps),
      { $match: compileFilter(plan, plan.where) },
      { $group: { _id: id, ...accumulators } },
      ...(Object.keys(sort).length ? [{ $sort: sort }] : []),
      { $limit: plan.maxGroups + 1 },
    ])
    .toArray();
  if (docs.length > plan.maxGroups) throw tooManyGroups(plan);
  const number = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  return docs.map((doc) => {
    const per = (prefix: string) =>
      Object.fromEntries(plan.fields.map((f, i) => [f, number(doc[`${prefix}${i}`])]));
    return {
      keys: Object.fromEntries(
        plan.groupBy.map((f, i) => [f, (doc._id?.[`g${i}`] as string | undefined) ?? null]),
      ),
      bucket: plan.bucket ? number(doc._id?.b) : null,
      count: doc.count as number,
      sum: Object.fromEntries(plan.fields.map((f, i) => [f, number(doc[`s${i}`]) ?? 0])),
      min: per('n'),
      max: per('x'),
      avg: per('a'),
    };
  });
}
