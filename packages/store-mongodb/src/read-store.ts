import { type EntityName, entities } from '@eggmesh/schema';
import {
  type AggregateGroup,
  type AggregateOptions,
  type PageOptions,
  type ProjectionChange,
  planAggregate,
  planQuery,
  type QueryOptions,
  type QueryPage,
  type ReadOptions,
  type ReadStore,
  type RelationPageOptions,
  type StoredRecord,
} from '@eggmesh/store';
import type { Db, MongoClient, ReadPreferenceMode } from 'mongodb';
import { type ConnectOptions, connect } from './client-limits.js';
import { translated } from './errors.js';
import { LOG, MongoEventLog } from './event-log.js';
import { MongoProjectionReader, PROJECTOR_META } from './projection-store.js';
import { MongoEntityReader } from './reader.js';
import { Wake, type WakeMode, waitUntil } from './wake.js';

export interface MongoReadStoreOptions {
  readonly uri: string;
  readonly dbName: string;
  /** Where reads go; `secondaryPreferred` (the default) spreads them over the replica set. */
  readonly readPreference?: ReadPreferenceMode;
  readonly serverSelectionTimeoutMS?: number;
  /** How `changed` wakes: a change stream where the server has them (`auto`, default) or the bounded poll. */
  readonly wake?: 'auto' | WakeMode;
  /**
   * How long a projection read waits for the projector to finish a batch it is applying before it
   * finishes the batch itself (a projector that died mid-batch); default 2000 ms.
   */
  readonly pendingGraceMs?: number;
}

/**
 * The read side on MongoDB (the `ReadStore` port), through a client on `secondaryPreferred`:
 * entities from the versioned collections, projections through `MongoProjectionReader` (whole
 * batches only), and the two positions the x-min-position wait compares against.
 */
export class MongoReadStore implements ReadStore {
  private readonly entities: MongoEntityReader;
  readonly projections: MongoProjectionReader;
  private readonly log: MongoEventLog;
  private readonly db: Db;
  private wake: Promise<Wake> | undefined;
  /** The positions last answered, so `changed` resolves as soon as either moved past them. */
  private seen = { replica: -1, projection: -1 };

  private constructor(
    readonly client: MongoClient,
    dbName: string,
    private readonly wakeMode: 'auto' | WakeMode,
    pendingGraceMs: number | undefined,
  ) {
    const db = client.db(dbName);
    this.db = db;
    this.entities = new MongoEntityReader(db);
    this.projections = new MongoProjectionReader(db, pendingGraceMs);
    // The read side never closes log gaps: the writers and the projector do.
    this.log = new MongoEventLog(db, { fillGaps: false, wake: 'poll' });
  }

  /** Connects (failing with STORE_UNAVAILABLE when no server answers in time). */
  static open(options: MongoReadStoreOptions): Promise<MongoReadStore> {
    const connectOptions: ConnectOptions = {
      uri: options.uri,
      readPreference: options.readPreference ?? 'secondaryPreferred',
      ...(options.serverSelectionTimeoutMS === undefined
        ? {}
        : { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS }),
    };
    return connect(
      connectOptions,
      async (client) =>
        new MongoReadStore(client, options.dbName, options.wake ?? 'auto', options.pendingGraceMs),
    );
  }

  private source(entity: EntityName): MongoEntityReader {
    return entities[entity].kind === 'projection' ? this.projections : this.entities;
  }

  /**
   * The **applied** position: the highest position up to which every commit's versions are in the
   * entity collections. The log's contiguous head is read first, then the first record not yet
   * applied: a record at or below that head was in the log before the second query, so it is either
   * found unapplied there or its versions are in. Without transactions a commit's record is written
   * before its versions, so the log head alone could run ahead of what entity reads show.
   */
  replicaPosition(): Promise<number> {
    return translated(async () => {
      const head = await this.log.head();
      const position = await this.log.appliedUpTo(head);
      if (position > this.seen.replica) this.seen.replica = position;
      return position;
    });
  }

  /** The checkpoint whole projection batches are visible up to. */
  async projectionPosition(): Promise<number> {
    const position = await this.projections.checkpoint();
    if (position > this.seen.projection) this.seen.projection = position;
    return position;
  }

  /**
   * Resolves once either position moved past what this store last answered (or after `timeoutMs`, or
   * on abort). Wakes on change streams of `event_log` and `projector_meta` where the server has them,
   * else re-checks on the bounded poll (20 ms, backing off to 100 ms).
   */
  async changed(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const before = { ...this.seen };
    this.wake ??= Wake.open(this.db, [LOG, PROJECTOR_META], this.wakeMode);
    const wake = await this.wake;
    await waitUntil(
      wake,
      async () => {
        try {
          const [replica, projection] = await Promise.all([
            this.replicaPosition(),
            this.projectionPosition(),
          ]);
          return replica > before.replica || projection > before.projection;
        } catch {
          return true; // let the caller see the failure on its own read
        }
      },
      timeoutMs,
      signal,
    );
  }

  /** From the versions each batch wrote, stamped with its checkpoint (`position`). */
  projectionChanges(after: number, through: number): Promise<ProjectionChange[]> {
    return this.projections.changes(after, through);
  }

  ping(): Promise<void> {
    return translated(async () => {
      await this.client.db('admin').command({ ping: 1 });
    });
  }

  get(entity: EntityName, id: string, options?: ReadOptions): Promise<StoredRecord | null> {
    return this.source(entity).get(entity, id, options);
  }
  getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions): Promise<StoredRecord[]> {
    return this.source(entity).getMany(entity, ids, options);
  }
  findBy(entity: EntityName, field: string, value: string, options: PageOptions): Promise<StoredRecord[]> {
    return this.source(entity).findBy(entity, field, value, options);
  }
  findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): Promise<StoredRecord[]> {
    return this.source(entity).findByAny(entity, field, values, options);
  }
  list(entity: EntityName, options: PageOptions): Promise<StoredRecord[]> {
    return this.source(entity).list(entity, options);
  }

  async query(entity: EntityName, options: QueryOptions): Promise<QueryPage> {
    return this.source(entity).query(planQuery(entity, options));
  }

  async aggregate(entity: EntityName, options: AggregateOptions): Promise<AggregateGroup[]> {
    return this.entities.aggregate(planAggregate(entity, options));
  }

  async close(): Promise<void> {
    const wake = this.wake;
    this.wake = undefined;
    if (wake) await (await wake).close();
    await this.client.close();
  }
}

export function openMongoReadStore(options: MongoReadStoreOptions): Promise<MongoReadStore> {
  return MongoReadStore.open(options);
}
