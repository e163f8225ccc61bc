import { randomUUID } from 'node:crypto';
import { type EntityName, entities } from '@eggmesh/schema';
import {
  type CommitResult,
  isStoreError,
  type LogEntry,
  type PrimaryStore,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
  type WriteOperation,
} from '@eggmesh/store';
import type { AnyBulkWriteOperation, Collection, Db, MongoClient, ReadPreferenceMode } from 'mongodb';
import { COMMIT_DEADLINE_MS, type ConnectOptions, clientLimits, connect } from './client-limits.js';
import { ignoreDuplicate, isDuplicateKey, isUnreachable, translated, withDeadline } from './errors.js';
import { type EntryDoc, fillPositions, LOG, type LogDoc, MongoEventLog } from './event-log.js';
import { Lease, needsLease } from './lease.js';
import { type CurrentDoc, MongoEntityReader, primaryEntities, type VersionDoc } from './reader.js';
import type { WakeMode } from './wake.js';

/** `counters` holds one document: the last allocated position and the time it was given. */
interface CounterDoc {
  _id: 'log';
  seq: number;
  time: number;
}

export interface MongoStoreHooks {
  /** After positions were allocated, before the log record is inserted (tests stall or crash here). */
  afterAllocate?(first: number, last: number): Promise<void>;
  /** After the log record is inserted, before the versions are applied (tests crash here). */
  afterLogInsert?(first: number, last: number): Promise<void>;
}

export interface MongoPrimaryStoreOptions {
  /** Connection string, e.g. `mongodb://a,b,c/?replicaSet=rs0`. */
  readonly uri: string;
  /** Database name. */
  readonly dbName: string;
  /** Write concern of every write: `majority` (the default) or a number of members. */
  readonly writeConcern?: 'majority' | number;
  /** Where reads go: `primary` for the write side; the read side passes `secondaryPreferred`. */
  readonly readPreference?: ReadPreferenceMode;
  /** A log position missing for this long (ms) is closed with an aborted record by readers. */
  readonly gapTimeoutMs?: number;
  /** How long an operation waits for a usable server before failing with STORE_UNAVAILABLE. */
  readonly serverSelectionTimeoutMS?: number;
  /** The wall clock (epoch ms); injected so tests control time. */
  readonly clock?: () => number;
  /** Test seams of the log-first protocol. */
  readonly hooks?: MongoStoreHooks;
  /**
   * The longest a commit waits from the call (its turn in the queue included) before it fails with
   * STORE_UNAVAILABLE, outcome unknown (default COMMIT_DEADLINE_MS, 30 s).
   */
  readonly commitDeadlineMs?: number;
  /** How `log.waitBeyond` wakes: a change stream where the server has them (`auto`, default) or a poll. */
  readonly wake?: 'auto' | WakeMode;
  /**
   * For the read side: no schema set-up or recovery at open, `commit` fails with STORE_READ_ONLY and
   * log readers never close gaps (they wait for a writer or the projector to do it).
   */
  readonly readonly?: boolean;
  /** How long the writer lease (FerretDB only) holds without renewal; default LEASE_TTL_MS (10 s). */
  readonly leaseTtlMs?: number;
}

/** How often a commit starts over after losing a race (another writer, or the gap filler). */
const MAX_ATTEMPTS = 16;
/** The write path reads from the primary whatever the store's read preference. */
const ON_PRIMARY = { readPreference: 'primary' } as const;
const COUNTERS = 'counters';

const keyOf = (entity: EntityName, id: string, replaced: number | undefined) =>
  `${entity}/${id}/${replaced ?? 0}`;

/** A commit that lost a race and starts over with fresh state and positions. */
class Retry extends Error {}

interface Plan {
  entries: { op: WriteOperation; previous: Record<string, unknown> | null; replaced: number | undefined }[];
}

/** A serial queue: commits of one store instance run one at a time. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.tail.then(work, work);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/**
 * The MongoDB primary: versioned collections per entity and an event log. Commits are atomic with the
 * log-first protocol on every deployment (standalone, replica set, sharded, FerretDB): it needs only
 * single-document writes and unique indexes, which every MongoDB-wire server here has and the tests
 * run, so no deployment switches to a commit path no test runs (see the package README).
 *
 * On FerretDB (`needsLease`) a writing store first takes the `writer` lease of its database: FerretDB
 * enforces the unique index on `keys` over the whole array, not per element, so a multi-operation
 * commit racing another writer instance on one of its versions would not be refused there. A second
 * writer is refused with STORE_UNAVAILABLE naming the holder until that one lets go or its lease
 * expires; one instance's commits are serialized by its queue. Commits check the lease first.
 */
export class MongoPrimaryStore extends MongoEntityReader implements PrimaryStore {
  readonly client: MongoClient;
  readonly log: MongoEventLog;
  private readonly clock: () => number;
  private readonly gapTimeoutMs: number;
  private readonly hooks: MongoStoreHooks;
  private readonly mutex = new Mutex();
  private readonly logRecords: Collection<LogDoc>;
  private readonly counters: Collection<CounterDoc>;
  /** The counter as this instance last wrote it; a stale value costs one failed compare-and-set. */
  private counter: CounterDoc | undefined;
  /** A write's outcome was unknown: recover before the next commit. */
  private recoverBeforeCommit = false;
  private readonly readonly: boolean;
  private readonly commitDeadlineMs: number;
  private lease: Lease | undefined;

  private constructor(client: MongoClient, db: Db, options: MongoPrimaryStoreOptions) {
    super(db);
    this.client = client;
    this.clock = options.clock ?? Date.now;
    this.gapTimeoutMs = options.gapTimeoutMs ?? 5000;
    this.hooks = options.hooks ?? {};
    this.readonly = options.readonly === true;
    this.commitDeadlineMs = options.commitDeadlineMs ?? COMMIT_DEADLINE_MS;
    this.logRecords = db.collection<LogDoc>(LOG);
    this.counters = db.collection<CounterDoc>(COUNTERS);
    this.log = new MongoEventLog(db, {
      gapTimeoutMs: this.gapTimeoutMs,
      fillGaps: !this.readonly,
      ...(options.wake ? { wake: options.wake } : {}),
    });
  }

  /** Connects, creates collections and indexes, and recovers unapplied commits. */
  static open(options: MongoPrimaryStoreOptions): Promise<MongoPrimaryStore> {
    const connectOptions: ConnectOptions = {
      uri: options.uri,
      writeConcern: options.writeConcern ?? 'majority',
      readPreference: options.readPreference ?? 'primary',
      ...(options.serverSelectionTimeoutMS === undefined
        ? {}
        : { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS }),
    };
    return connect(connectOptions, async (client) => {
      const db = client.db(options.dbName);
      const store = new MongoPrimaryStore(client, db, options);
      if (store.readonly) return store;
      store.lease = (await needsLease(db)) ? await Lease.take(db, 'writer', options.leaseTtlMs) : undefined;
      try {
        await store.ensureSchema();
        await store.recover();
      } catch (error) {
        await store.lease?.release();
        throw error;
      }
      return store;
    });
  }

  private async ensureSchema(): Promise<void> {
    await this.logRecords.createIndex({ keys: 1 }, { unique: true, name: 'keys' });
    await this.logRecords.createIndex({ last: 1 }, { name: 'last' });
    await this.logRecords.createIndex({ applied: 1 }, { name: 'applied' });
    for (const entity of primaryEntities) {
      const { versions, current } = this.collections(entity);
      await versions.createIndex({ id: 1, created_at: 1 }, { unique: true, name: 'id_created_at' });
      for (const field of entities[entity].indexedFields) {
        await versions.createIndex(
          { [`payload.${field}`]: 1, id: 1, created_at: 1 },
          { name: `by_${field}` },
        );
        await current.createIndex({ [`payload.${field}`]: 1, _id: 1 }, { name: `by_${field}` });
      }
    }
    await this.counters
      .insertOne({ _id: 'log', seq: 0, time: 0 })
      .catch((error: unknown) => ignoreDuplicate(error));
  }

  /**
   * Applies the versions of every committed log record whose versions are not (all) in place: a
   * writer that stopped between its log record and its versions. Idempotent; runs at open.
   */
  async recover(): Promise<number> {
    return translated(async () => {
      const pending = await this.logRecords.find({ applied: false }, ON_PRIMARY).sort({ _id: 1 }).toArray();
      for (const record of pending) await this.apply(record);
      return pending.length;
    });
  }

  async commit(operations: readonly WriteOperation[]): Promise<CommitResult> {
    if (this.readonly) throw new StoreError(storeErrorCodes.READ_ONLY, 'this store was opened read-only');
    if (operations.length === 0) return { records: [], position: await this.log.head() };
    // Every commit answers by its deadline, and a commit whose driver call never settles (a write on
    // a socket the dying server closed waits for a `drain` that never comes) does not hold the ones
    // queued behind it: the queue moves on at the deadline, and the abandoned commit stops before
    // its commit point if it ever resumes (an unknown outcome: the next commit recovers first).
    const deadline = performance.now() + this.commitDeadlineMs;
    const gone = new AbortController();
    const turn = this.mutex.run(() => {
      if (gone.signal.aborted) throw gone.signal.reason;
      const running = translated(() => this.commitLogFirst(operations, gone.signal));
      return withDeadline(running, deadline - performance.now(), 'a commit', () => {
        this.recoverBeforeCommit = true;
        gone.abort(new StoreError(storeErrorCodes.UNAVAILABLE, 'the commit passed its deadline'));
      });
    });
    return withDeadline(turn, deadline - performance.now(), 'a commit', () =>
      gone.abort(new StoreError(storeErrorCodes.UNAVAILABLE, 'the commit passed its deadline in the queue')),
    );
  }

  /**
   * Bulk-loads log entries that follow the current head, with their own positions and times (a
   * dataset for benchmarks, a migration): log records, versions and current documents written with
   * unordered inserts, the counter moved to the end. Not a commit path: no other writer may run.
   */
  async importLog(entries: readonly LogEntry[]): Promise<void> {
    if (this.readonly) throw new StoreError(storeErrorCodes.READ_ONLY, 'this store was opened read-only');
    if (entries.length === 0) return;
    await translated(async () => {
      await this.lease?.hold();
      const records: LogDoc[] = [];
      const versions = new Map<EntityName, VersionDoc[]>();
      const current = new Map<EntityName, Map<string, CurrentDoc>>();
      // The versions the first entries replace: one `$in` per entity.
      const before = new Map<string, number>();
      const idsOf = new Map<EntityName, Set<string>>();
      for (const { entity, id } of entries) idsOf.set(entity, (idsOf.get(entity) ?? new Set()).add(id));
      for (const [entity, ids] of idsOf) {
        const docs = await this.collections(entity)
          .current.find({ _id: { $in: [...ids] } }, { ...ON_PRIMARY, projection: { created_at: 1 } })
          .toArray();
        for (const doc of docs) before.set(`${entity}/${doc._id}`, doc.created_at);
      }
      for (const entry of entries) {
        const byId = current.get(entry.entity) ?? new Map<string, CurrentDoc>();
        current.set(entry.entity, byId);
        const replaced = byId.get(entry.id)?.created_at ?? before.get(`${entry.entity}/${entry.id}`);
        const deleted = entry.op === 'delete';
        records.push({
          _id: entry.position,
          last: entry.position,
          keys: [keyOf(entry.entity, entry.id, replaced)],
          entries: [
            {
              entity: entry.entity,
              id: entry.id,
              op: entry.op,
              payload: entry.payload,
              previous: entry.previous,
              created_at: entry.createdAt,
            },
          ],
          applied: true,
          commit: 'import',
        });
        const list = versions.get(entry.entity) ?? [];
        versions.set(entry.entity, list);
        list.push({
          id: entry.id,
          created_at: entry.createdAt,
          deleted,
          payload: entry.payload,
          position: entry.position,
        });
        byId.set(entry.id, {
          _id: entry.id,
          created_at: entry.createdAt,
          deleted,
          payload: entry.payload,
          position: entry.position,
        });
      }
      await this.logRecords.insertMany(records, { ordered: false });
      for (const [entity, list] of versions)
        await this.collections(entity).versions.insertMany(list, { ordered: false });
      for (const [entity, byId] of current) {
        await this.collections(entity).current.bulkWrite(
          [...byId.values()].map((doc) => ({
            replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true },
          })),
          { ordered: false },
        );
      }
      const last = entries[entries.length - 1]!;
      const time = Math.max(...entries.map((e) => e.createdAt));
      await this.counters.updateOne({ _id: 'log' }, { $max: { seq: last.position, time } });
      this.counter = undefined;
    });
  }

  // --- the log-first protocol -------------------------------------------------------------------

  private async commitLogFirst(
    operations: readonly WriteOperation[],
    gone: AbortSignal,
  ): Promise<CommitResult> {
    await this.lease?.hold();
    if (this.recoverBeforeCommit) {
      await this.recover();
      gone.throwIfAborted();
      this.recoverBeforeCommit = false;
    }
    for (let attempt = 1; ; attempt++) {
      const plan = await this.planAfterPending(operations);
      gone.throwIfAborted();
      const record = await this.allocate(plan);
      await this.hooks.afterAllocate?.(record._id, record.last);
      // Past its deadline nobody waits for this commit: it must not commit now (its positions stay a
      // gap until a reader closes it).
      gone.throwIfAborted();
      try {
        await this.insertRecord(record);
      } catch (error) {
        if (!(error instanceof Retry)) throw error;
        if (attempt >= MAX_ATTEMPTS) {
          throw new StoreError(
            storeErrorCodes.CONFLICT,
            `commit lost ${attempt} races with concurrent writers or the gap filler; nothing was written`,
          );
        }
        // Jittered backoff: two writers that keep colliding on one id would otherwise retry in lockstep.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 2 ** attempt)));
        continue;
      }
      await this.hooks.afterLogInsert?.(record._id, record.last);
      await this.apply(record);
      return result(record);
    }
  }

  /**
   * Plans against the entity collections. A refusal (exists / does not exist) may come from a
   * committed record whose writer stopped before applying it: apply those, then plan once more.
   * (A plan that passes needs no such check: an unapplied record on the same id holds the key.)
   */
  private async planAfterPending(operations: readonly WriteOperation[]): Promise<Plan> {
    try {
      return await this.plan(operations);
    } catch (error) {
      const refused =
        isStoreError(error, storeErrorCodes.NOT_FOUND) || isStoreError(error, storeErrorCodes.ALREADY_EXISTS);
      if (refused && (await this.recover()) > 0) return this.plan(operations);
      throw error;
    }
  }

  /** Inserts the commit record; throws Retry when it lost a race (and nothing of it was committed). */
  private async insertRecord(record: LogDoc): Promise<void> {
    try {
      await this.logRecords.insertOne(record);
    } catch (error) {
      if (isDuplicateKey(error)) {
        // Which unique index refused the record is decided by what is at our first position, not by
        // the error's text (servers name the index differently, FerretDB not at all).
        const holder = await this.logRecords.findOne(
          { _id: record._id },
          { ...ON_PRIMARY, projection: { commit: 1 } },
        );
        if (holder?.commit === record.commit) return; // ours after all (a retried insert)
        if (holder) {
          // The gap filler closed our first position: this commit did not happen.
          await this.fill(record._id + 1, record.last);
          throw new Retry();
        }
        // Our positions are free, so `keys` refused it: another commit replaced one of our versions
        // first. Close our positions, bring its versions in place, start over.
        await this.fill(record._id, record.last);
        await this.applyRecordsHolding(record.keys);
        throw new Retry();
      }
      if (isUnreachable(error)) {
        // Unknown outcome: the record may be in. Settle it now if the server answers again (close
        // our positions; if our record holds the first one, it committed); otherwise the next
        // commit, or the next open, recovers and a reader's gap filler closes the positions.
        this.recoverBeforeCommit = true;
        const outcome = await this.settle(record).catch(() => 'unknown' as const);
        if (outcome === 'committed') return;
        if (outcome === 'aborted') throw new Retry();
      }
      throw error;
    }
  }

  /** After an unknown outcome: closes the record's positions unless it is in, and says which. */
  private async settle(record: LogDoc): Promise<'committed' | 'aborted'> {
    await this.fill(record._id, record.last);
    const found = await this.logRecords.findOne(
      { _id: record._id },
      { ...ON_PRIMARY, projection: { commit: 1 } },
    );
    return found?.commit === record.commit ? 'committed' : 'aborted';
  }

  /** Closes positions first … last with aborted records, stopping at one that exists. */
  private fill(first: number, last: number): Promise<void> {
    return fillPositions(this.logRecords, first, last);
  }

  private async applyRecordsHolding(keys: readonly string[]): Promise<void> {
    const holders = await this.logRecords
      .find({ keys: { $in: [...keys] }, applied: false }, ON_PRIMARY)
      .toArray();
    for (const record of holders) await this.apply(record);
  }

  /** Checks every operation against the newest versions (and earlier operations of the commit). */
  private async plan(operations: readonly WriteOperation[]): Promise<Plan> {
    const byEntity = new Map<EntityName, Set<string>>();
    for (const { entity, id } of operations) {
      this.collections(entity);
      const ids = byEntity.get(entity) ?? new Set<string>();
      if (ids.size === 0) byEntity.set(entity, ids);
      ids.add(id);
    }
    const newest = new Map<
      string,
      { created_at: number; deleted: boolean; payload: CurrentDoc['payload'] }
    >();
    for (const [entity, ids] of byEntity) {
      const docs = await this.collections(entity)
        .current.find({ _id: { $in: [...ids] } }, ON_PRIMARY)
        .toArray();
      for (const doc of docs) newest.set(`${entity}/${doc._id}`, doc);
    }
    const entries: Plan['entries'] = [];
    operations.forEach((op, index) => {
      const key = `${op.entity}/${op.id}`;
      const latest = newest.get(key);
      const live = latest !== undefined && !latest.deleted;
      if (op.op === 'create' && live) {
        throw new StoreError(storeErrorCodes.ALREADY_EXISTS, `${op.entity} ${op.id} already exists`, {
          index,
          entity: op.entity,
          id: op.id,
        });
      }
      if (op.op !== 'create' && !live) {
        throw new StoreError(storeErrorCodes.NOT_FOUND, `${op.entity} ${op.id} does not exist`, {
          index,
          entity: op.entity,
          id: op.id,
        });
      }
      entries.push({ op, previous: live ? latest.payload : null, replaced: latest?.created_at });
      // Later operations of the same commit see this one; its time is fixed at allocation.
      newest.set(key, {
        created_at: latest?.created_at ?? -1,
        deleted: op.op === 'delete',
        payload: op.op === 'delete' ? null : op.payload,
      });
    });
    return { entries };
  }

  /**
   * Takes the next positions and their times with a compare-and-set on the counter, so positions and
   * times rise together across every writer: a version's time is at least the counter's time, at
   * least the replaced version's time + 1, and the counter keeps the largest.
   */
  private async allocate(plan: Plan): Promise<LogDoc> {
    const n = plan.entries.length;
    let counter = this.counter;
    for (;;) {
      counter ??= await this.readCounter();
      const base = Math.max(this.clock(), counter.time);
      const entries: EntryDoc[] = [];
      const keys: string[] = [];
      const timeOf = new Map<string, number>();
      let time = base;
      for (const { op, previous, replaced } of plan.entries) {
        const key = `${op.entity}/${op.id}`;
        const before = timeOf.get(key) ?? replaced;
        time = Math.max(time, (before ?? -1) + 1);
        timeOf.set(key, time);
        keys.push(keyOf(op.entity, op.id, before));
        entries.push({
          entity: op.entity,
          id: op.id,
          op: op.op,
          payload: op.op === 'delete' ? null : op.payload,
          previous,
          created_at: time,
        });
      }
      const next: CounterDoc = { _id: 'log', seq: counter.seq + n, time };
      const swapped = await this.counters.findOneAndUpdate(
        { _id: 'log', seq: counter.seq },
        { $set: { seq: next.seq, time: next.time } },
        { returnDocument: 'after' },
      );
      if (swapped) {
        this.counter = next;
        return {
          _id: counter.seq + 1,
          last: next.seq,
          keys,
          entries,
          applied: false,
          commit: randomUUID(),
        };
      }
      counter = undefined;
    }
  }

  private async readCounter(): Promise<CounterDoc> {
    for (;;) {
      const counter = await this.counters.findOne({ _id: 'log' }, ON_PRIMARY);
      if (counter) return counter;
      await this.counters.insertOne({ _id: 'log', seq: 0, time: 0 }).catch(ignoreDuplicate);
    }
  }

  /** Puts the versions of a committed record in place and marks it applied; a re-run changes nothing. */
  private async apply(record: LogDoc): Promise<void> {
    const byEntity = new Map<EntityName, { position: number; entry: EntryDoc }[]>();
    record.entries.forEach((entry, i) => {
      const list = byEntity.get(entry.entity) ?? [];
      if (list.length === 0) byEntity.set(entry.entity, list);
      list.push({ position: record._id + i, entry });
    });
    const opts = { ordered: false };
    for (const [entity, list] of byEntity) {
      const { versions, current } = this.collections(entity);
      // Unique on (id, created_at): a re-apply is refused as a duplicate and changes nothing.
      const versionDocs: VersionDoc[] = list.map(({ position, entry }) => ({
        id: entry.id,
        created_at: entry.created_at,
        deleted: entry.op === 'delete',
        payload: entry.payload,
        position,
      }));
      // The current document only moves forward in time, so applying in any order ends the same.
      const currentOps: AnyBulkWriteOperation<CurrentDoc>[] = list.map(({ position, entry }) => ({
        updateOne: {
          filter: { _id: entry.id, created_at: { $lt: entry.created_at } },
          update: {
            $set: {
              created_at: entry.created_at,
              deleted: entry.op === 'delete',
              payload: entry.payload,
              position,
            },
          },
          upsert: true,
        },
      }));
      await versions.insertMany(versionDocs, opts).catch(ignoreDuplicate);
      await current.bulkWrite(currentOps, opts).catch(ignoreDuplicate);
    }
    await this.logRecords.updateOne({ _id: record._id }, { $set: { applied: true } });
  }

  async ping(): Promise<void> {
    // Bounded like a commit: /ready must answer even when a driver call would not.
    await withDeadline(
      translated(() => this.db.command({ ping: 1 })),
      clientLimits.socketTimeoutMS,
      'a ping',
    );
  }

  async close(): Promise<void> {
    await this.lease?.release();
    await this.log.close();
    await this.client.close();
  }
}

function result(record: LogDoc): CommitResult {
  const records: StoredRecord[] = record.entries.map((e) => ({
    id: e.id,
    createdAt: e.created_at,
    payload: (e.op === 'delete' ? e.previous : e.payload) ?? {},
  }));
  return { records, position: record.last };
}

/** Opens a MongoDB primary store (see MongoPrimaryStoreOptions). */
export function openMongoPrimaryStore(options: MongoPrimaryStoreOptions): Promise<MongoPrimaryStore> {
  return MongoPrimaryStore.open(options);
}
