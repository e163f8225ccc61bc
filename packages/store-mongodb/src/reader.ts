import { type EntityName, entities, entityNames } from '@eggmesh/schema';
import {
  type AggregateGroup,
  type EntityReader,
  type PageOptions,
  type PlannedAggregate,
  type PlannedQuery,
  type QueryPage,
  type ReadOptions,
  type RelationPageOptions,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
} from '@eggmesh/store';
import type { Collection, Db, Filter } from 'mongodb';
import { translated } from './errors.js';
import { hasAggregationExpressions, runAggregate, runQuery } from './query.js';

/** The entities the primary holds: everything clients write (projections live elsewhere). */
export const primaryEntities: readonly EntityName[] = entityNames.filter(
  (e) => entities[e].kind !== 'projection',
);

/** The entities the projector writes. */
export const projectionEntities: readonly EntityName[] = entityNames.filter(
  (e) => entities[e].kind === 'projection',
);

/**
 * One version of an entity: `<entity>_versions`, unique on (id, created_at). For a projection,
 * `position` is the checkpoint of the batch that wrote it and a tombstone keeps its payload.
 */
export interface VersionDoc {
  id: string;
  created_at: number;
  deleted: boolean;
  payload: Record<string, unknown> | null;
  /** The log position that wrote it. */
  position: number;
}

/** The newest version of an id, live or a tombstone: `<entity>_current`, keyed by the id. */
export interface CurrentDoc {
  _id: string;
  created_at: number;
  deleted: boolean;
  payload: Record<string, unknown> | null;
  position: number;
}

export const collectionNames = (entity: EntityName) =>
  ({ versions: `${entity}_versions`, current: `${entity}_current` }) as const;

/** Ids resolved per round trip when a read `at` a time walks candidate ids. */
const AT_BATCH = 256;

const fromCurrent = (doc: CurrentDoc): StoredRecord => ({
  id: doc._id,
  createdAt: doc.created_at,
  payload: doc.payload ?? {},
});
const fromVersion = (doc: VersionDoc): StoredRecord => ({
  id: doc.id,
  createdAt: doc.created_at,
  payload: doc.payload ?? {},
});

/**
 * Reads the versioned collections. Reads "now" use `<entity>_current` (tombstones hidden); reads
 * `at` a time take the newest version with `created_at <= at` per id from `<entity>_versions`.
 */
export class MongoEntityReader implements EntityReader {
  constructor(
    protected readonly db: Db,
    /** The entities these collections hold. */
    protected readonly held: readonly EntityName[] = primaryEntities,
  ) {}

  protected collections(entity: EntityName) {
    if (!this.held.includes(entity)) {
      throw new StoreError(storeErrorCodes.NOT_FOUND, `this store does not hold ${entity}`, { entity });
    }
    const names = collectionNames(entity);
    return {
      versions: this.db.collection<VersionDoc>(names.versions),
      current: this.db.collection<CurrentDoc>(names.current),
    };
  }

  private field(entity: EntityName, field: string): string {
    if (!entities[entity].indexedFields.includes(field)) {
      throw new StoreError(storeErrorCodes.UNKNOWN_FIELD, `${entity} has no indexed field ${field}`, {
        entity,
      });
    }
    return `payload.${field}`;
  }

  get(entity: EntityName, id: string, options?: ReadOptions): Promise<StoredRecord | null> {
    return translated(async () => {
      const { versions, current } = this.collections(entity);
      if (options?.at === undefined) {
        const doc = await current.findOne({ _id: id, deleted: false });
        return doc ? fromCurrent(doc) : null;
      }
      const [doc] = await versions
        .find({ id, created_at: { $lte: options.at } })
        .sort({ created_at: -1 })
        .limit(1)
        .toArray();
      return doc && !doc.deleted ? fromVersion(doc) : null;
    });
  }

  getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions): Promise<StoredRecord[]> {
    return translated(async () => {
      const { versions, current } = this.collections(entity);
      const unique = [...new Set(ids)];
      if (unique.length === 0) return [];
      if (options?.at === undefined) {
        const docs = await current.find({ _id: { $in: unique }, deleted: false }).toArray();
        return docs.map(fromCurrent);
      }
      return newestAt(versions, unique, options.at, () => true);
    });
  }

  findBy(entity: EntityName, field: string, value: string, options: PageOptions): Promise<StoredRecord[]> {
    return translated(async () => {
      const { versions, current } = this.collections(entity);
      const path = this.field(entity, field);
      if (options.limit < 1) return [];
      if (options.at === undefined) {
        const filter: Filter<CurrentDoc> = { [path]: value, deleted: false };
        if (options.after !== undefined) filter._id = { $gt: options.after };
        const docs = await current.find(filter).sort({ _id: 1 }).limit(options.limit).toArray();
        return docs.map(fromCurrent);
      }
      return walkAt(versions, { [path]: value }, options.at, (d) => d.payload?.[field] === value, options);
    });
  }

  findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): Promise<StoredRecord[]> {
    const limit = options?.limit;
    if (limit !== undefined || options?.after !== undefined) {
      // Paged per value: each value's first rows in id order. One query per distinct value (the test server
      // has no $setWindowFields/$topN to page inside one aggregation).
      const page = { limit: limit ?? Number.MAX_SAFE_INTEGER, after: options?.after, at: options?.at };
      return Promise.all([...new Set(values)].map((value) => this.findBy(entity, field, value, page))).then(
        (pages) => pages.flat(),
      );
    }
    return translated(async () => {
      const { versions, current } = this.collections(entity);
      const path = this.field(entity, field);
      const unique = [...new Set(values)];
      if (unique.length === 0) return [];
      if (options?.at === undefined) {
        const filter: Filter<CurrentDoc> = { [path]: { $in: unique }, deleted: false };
        const docs = await current.find(filter).sort({ _id: 1 }).toArray();
        return docs.map(fromCurrent);
      }
      const wanted = new Set<unknown>(unique);
      return walkAt(versions, { [path]: { $in: unique } }, options.at, (d) => wanted.has(d.payload?.[field]));
    });
  }

  /** A planned list query as aggregation pipelines (see `runQuery`). */
  query(plan: PlannedQuery): Promise<QueryPage> {
    return translated(async () =>
      runQuery(plan, this.collections(plan.entity), await hasAggregationExpressions(this.db)),
    );
  }

  /** A planned aggregate as one aggregation pipeline (see `runAggregate`). */
  aggregate(plan: PlannedAggregate): Promise<AggregateGroup[]> {
    return translated(async () =>
      runAggregate(plan, this.collections(plan.entity), await hasAggregationExpressions(this.db)),
    );
  }

  list(entity: EntityName, options: PageOptions): Promise<StoredRecord[]> {
    return translated(async () => {
      const { versions, current } = this.collections(entity);
      if (options.limit < 1) return [];
      if (options.at === undefined) {
        const filter: Filter<CurrentDoc> = { deleted: false };
        if (options.after !== undefined) filter._id = { $gt: options.after };
        const docs = await current.find(filter).sort({ _id: 1 }).limit(options.limit).toArray();
        return docs.map(fromCurrent);
      }
      return walkAt(versions, {}, options.at, () => true, options);
    });
  }
}

/** The newest version at `at` of each id, when it is live and `keep` accepts it; in id order. */
async function newestAt(
  versions: Collection<VersionDoc>,
  ids: readonly string[],
  at: number,
  keep: (doc: VersionDoc) => boolean,
): Promise<StoredRecord[]> {
  const docs = await versions
    .find({ id: { $in: [...ids] }, created_at: { $lte: at } })
    .sort({ id: 1, created_at: -1 })
    .toArray();
  const out: StoredRecord[] = [];
  let previous: string | undefined;
  for (const doc of docs) {
    if (doc.id === previous) continue;
    previous = doc.id;
    if (!doc.deleted && keep(doc)) out.push(fromVersion(doc));
  }
  return out;
}

/**
 * A read `at` a time: walks the ids that had a version matching `filter` by then, in id order, and
 * keeps those whose newest version at that time is live and still matches; stops at the limit.
 */
async function walkAt(
  versions: Collection<VersionDoc>,
  filter: Filter<VersionDoc>,
  at: number,
  keep: (doc: VersionDoc) => boolean,
  page?: { readonly limit: number; readonly after?: string | undefined },
): Promise<StoredRecord[]> {
  const candidates: Filter<VersionDoc> = { ...filter, created_at: { $lte: at } };
  if (page?.after !== undefined) candidates.id = { $gt: page.after };
  const cursor = versions.find(candidates, { projection: { _id: 0, id: 1 } }).sort({ id: 1 });
  const limit = page?.limit ?? Number.POSITIVE_INFINITY;
  const out: StoredRecord[] = [];
  let batch: string[] = [];
  let last: string | undefined;
  try {
    for await (const doc of cursor) {
      if (doc.id === last) continue;
      last = doc.id;
      batch.push(doc.id);
      if (batch.length >= AT_BATCH) {
        out.push(...(await newestAt(versions, batch, at, keep)));
        batch = [];
        if (out.length >= limit) break;
      }
    }
    if (batch.length > 0 && out.length < limit) out.push(...(await newestAt(versions, batch, at, keep)));
  } finally {
    await cursor.close();
  }
  return out.length > limit ? out.slice(0, limit) : out;
}
