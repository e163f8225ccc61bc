import { randomUUID } from 'node:crypto';
import { type EntityName, entities } from '@eggmesh/schema';
import {
  type CommitResult,
  type EventLog,
  isStoreError,
  type LogEntry,
  type Operation,
  type PrimaryStore,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
  type WriteOperation,
} from '@eggmesh/store';
import {
  type AnyBulkWriteOperation,
  type ClientSession,
  type Collection,
  type Db,
  MongoBulkWriteError,
  MongoClient,
  type ReadPreferenceMode,
  type W,
} from 'mongodb';
import { type CommitMode, chooseCommitMode } from './capabilities.js';
import { duplicateKeyIndex, isUnreachable, toStoreError, translated } from './errors.js';
import { type CurrentDoc, MongoEntityReader, primaryEntities, type VersionDoc } from './reader.js';

/** One entry inside a log record. */
interface EntryDoc {
  entity: EntityName;
  id: string;
  op: Operation;
  payload: Record<string, unknown> | null;
  previous: Record<string, unknown> | null;
  created_at: number;
}

/**
 * One commit in `event_log`: the entries at positions `_id` … `last`. It is the commit record: a
 * commit happened exactly when its record is in the collection. `keys` names the version each entry
 * replaced (`entity/id/created_at`, 0 for none) under a unique index, so two commits can never
 * replace the same version. An `aborted` record holds a position nobody will write (no entries).
 */
interface LogDoc {
  _id: number;
  last: number;
  keys: string[];
  entries: EntryDoc[];
  /** Whether the versions of the entries are in the entity collections. */
  applied: boolean;
  aborted?: true;
  /** Identifies the commit, to tell after an unknown outcome whether this record is ours. */
  commit: string;
}

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
  /** `auto` (default): transactions when the deployment has them, the log-first protocol otherwise. */
  readonly commitMode?: 'auto' | CommitMode;
  /** A log position missing for this long (ms) is closed with an aborted record by readers. */
  readonly gapTimeoutMs?: number;
  /** How long an operation waits for a usable server before failing with STORE_UNAVAILABLE. */
  readonly serverSelectionTimeoutMS?: number;
  /** The wall clock (epoch ms); injected so tests control time. */
  readonly clock?: () => number;
  /** Test seams of the log-first protocol. */
  readonly hooks?: MongoStoreHooks;
  /**
   * For the read side: no schema set-up or recovery at open, `commit` fails with STORE_READ_ONLY and
   * log readers never close gaps (they wait for a writer or the projector to do it).
   */
  readonly readonly?: boolean;
}

/** How often a commit starts over after losing a race (another writer, or the gap filler). */
const MAX_ATTEMPTS = 16;
const LOG = 'event_log';
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
 * The MongoDB primary: versioned collections per entity and an event log. Commits are atomic with a
 * multi-document transaction where the deployment has them, and with the log-first protocol where
 * it does not (see the package README for what each guarantees).
 */
export class MongoPrimaryStore extends MongoEntityReader implements PrimaryStore {
  readonly client: MongoClient;
  readonly log: EventLog;
  private mode: CommitMode = 'log-first';
  private readonly clock: () => number;
  private readonly gapTimeoutMs: number;
  private readonly hooks: MongoStoreHooks;
  private readonly mutex = new Mutex();
  private readonly logRecords: Collection<LogDoc>;
  private readonly counters: Collection<CounterDoc>;
  /** The counter as this instance last wrote it; a stale value costs one failed compare-and-set. */
  private counter: CounterDoc | undefined;
  /** When a reader first saw each missing position (performance.now()). */
  private readonly gapsSeen = new Map<number, number>();
  /** A write's outcome was unknown: recover before the next commit. */
  private recoverBeforeCommit = false;
  private readonly readonly: boolean;

  private constructor(client: MongoClient, db: Db, options: MongoPrimaryStoreOptions) {
    super(db);
    this.client = client;
    this.clock = options.clock ?? Date.now;
    this.gapTimeoutMs = options.gapTimeoutMs ?? 5000;
    this.hooks = options.hooks ?? {};
    this.readonly = options.readonly === true;
    this.logRecords = db.collection<LogDoc>(LOG);
    this.counters = db.collection<CounterDoc>(COUNTERS);
    this.log = {
      read: (after, limit) => translated(() => this.readLog(after, limit)),
      head: () => translated(() => this.head()),
      waitBeyond: (after, timeoutMs, signal) => this.waitBeyond(after, timeoutMs, signal),
      acknowledge: async () => undefined,
      close: async () => undefined,
    };
  }

  /** Connects, creates collections and indexes, picks the commit mode and recovers unapplied commits. */
  static async open(options: MongoPrimaryStoreOptions): Promise<MongoPrimaryStore> {
    const w: W = options.writeConcern ?? 'majority';
    const client = new MongoClient(options.uri, {
      writeConcern: { w },
      readPreference: options.readPreference ?? 'primary',
      serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000,
    });
    try {
      await translated(() => client.connect());
      const store = new MongoPrimaryStore(client, client.db(options.dbName), options);
      await translated(async () => {
        const hello = await client.db('admin').command({ isMaster: 1 });
        store.mode = chooseCommitMode(hello, options.commitMode);
        if (!store.readonly) {
          await store.ensureSchema();
          await store.recover();
        }
      });
      return store;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  /** How this store makes commits atomic. */
  get commitMode(): CommitMode {
    return this.mode;
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
    return this.mutex.run(() =>
      translated(() =>
        this.mode === 'transactions' ? this.commitInTransaction(operations) : this.commitLogFirst(operations),
      ),
    );
  }

  // --- the log-first protocol -------------------------------------------------------------------

  private async commitLogFirst(operations: readonly WriteOperation[]): Promise<CommitResult> {
    if (this.recoverBeforeCommit) {
      await this.recover();
      this.recoverBeforeCommit = false;
    }
    for (let attempt = 1; ; attempt++) {
      const plan = await this.planAfterPending(operations);
      const record = await this.allocate(plan, undefined);
      await this.hooks.afterAllocate?.(record._id, record.last);
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
      const index = duplicateKeyIndex(error);
      if (index === 'keys') {
        // Another commit replaced one of our versions first: bring its versions in place, start over.
        await this.fill(record._id, record.last);
        await this.applyRecordsHolding(record.keys);
        throw new Retry();
      }
      if (index !== undefined) {
        // The gap filler closed our first position: this commit did not happen.
        await this.fill(record._id + 1, record.last);
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
  private async fill(first: number, last: number): Promise<void> {
    if (first > last) return;
    const records: LogDoc[] = [];
    for (let p = first; p <= last; p++) {
      records.push({
        _id: p,
        last: p,
        keys: [`aborted/${p}`],
        entries: [],
        applied: true,
        aborted: true,
        commit: 'aborted',
      });
    }
    await this.logRecords.insertMany(records, { ordered: true }).catch(ignoreDuplicate);
  }

  private async applyRecordsHolding(keys: readonly string[]): Promise<void> {
    const holders = await this.logRecords
      .find({ keys: { $in: [...keys] }, applied: false }, ON_PRIMARY)
      .toArray();
    for (const record of holders) await this.apply(record);
  }

  // --- shared by both commit modes ----------------------------------------------------------------

  /** Checks every operation against the newest versions (and earlier operations of the commit). */
  private async plan(operations: readonly WriteOperation[], session?: ClientSession): Promise<Plan> {
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
        .current.find({ _id: { $in: [...ids] } }, session ? { session } : ON_PRIMARY)
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
  private async allocate(plan: Plan, session: ClientSession | undefined): Promise<LogDoc> {
    const n = plan.entries.length;
    const opts = session ? { session } : {};
    let counter = session ? undefined : this.counter;
    for (;;) {
      counter ??= await this.readCounter(session);
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
        { ...opts, returnDocument: 'after' },
      );
      if (swapped) {
        if (!session) this.counter = next;
        return {
          _id: counter.seq + 1,
          last: next.seq,
          keys,
          entries,
          applied: session !== undefined,
          commit: randomUUID(),
        };
      }
      // Inside a transaction the snapshot cannot change: a moved counter is a write conflict.
      if (session)
        throw new StoreError(storeErrorCodes.CONFLICT, 'the log counter moved during the transaction');
      counter = undefined;
    }
  }

  private async readCounter(session: ClientSession | undefined): Promise<CounterDoc> {
    const opts = session ? { session } : ON_PRIMARY;
    for (;;) {
      const counter = await this.counters.findOne({ _id: 'log' }, opts);
      if (counter) return counter;
      await this.counters.insertOne({ _id: 'log', seq: 0, time: 0 }, opts).catch(ignoreDuplicate);
    }
  }

  /** Puts the versions of a committed record in place and marks it applied; a re-run changes nothing. */
  private async apply(record: LogDoc, session?: ClientSession): Promise<void> {
    const byEntity = new Map<EntityName, { position: number; entry: EntryDoc }[]>();
    record.entries.forEach((entry, i) => {
      const list = byEntity.get(entry.entity) ?? [];
      if (list.length === 0) byEntity.set(entry.entity, list);
      list.push({ position: record._id + i, entry });
    });
    const opts = session ? { session, ordered: false } : { ordered: false };
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
    if (!session) await this.logRecords.updateOne({ _id: record._id }, { $set: { applied: true } });
  }

  // --- transactions -------------------------------------------------------------------------------

  private async commitInTransaction(operations: readonly WriteOperation[]): Promise<CommitResult> {
    const session = this.client.startSession();
    try {
      let committed: LogDoc | undefined;
      await session.withTransaction(
        async () => {
          const plan = await this.plan(operations, session);
          const record = await this.allocate(plan, session);
          await this.logRecords.insertOne(record, { session });
          await this.apply(record, session);
          committed = record;
        },
        { readConcern: { level: 'snapshot' } },
      );
      if (!committed) throw new StoreError(storeErrorCodes.CONFLICT, 'the transaction did not commit');
      return result(committed);
    } finally {
      await session.endSession();
    }
  }

  // --- the log ------------------------------------------------------------------------------------

  /** A bounded poll of the head (the first cut; a change stream can replace it where one exists). */
  private async waitBeyond(after: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if ((await translated(() => this.head())) > after) return true;
      const left = deadline - performance.now();
      if (signal?.aborted || left <= 0) return false;
      await pause(Math.min(left, HEAD_POLL_MS), signal);
    }
  }

  private async head(): Promise<number> {
    const [newest] = await this.logRecords
      .find({}, { projection: { last: 1 } })
      .sort({ _id: -1 })
      .limit(1)
      .toArray();
    return newest?.last ?? 0;
  }

  /**
   * Entries after `after`, in position order, up to the first missing position: a reader never
   * passes a position that may still commit. A position missing for `gapTimeoutMs` is closed with
   * an aborted record (the unique `_id` makes the writer's late insert fail), then reading goes on.
   */
  private async readLog(after: number, limit: number): Promise<LogEntry[]> {
    const out: LogEntry[] = [];
    let expected = after + 1;
    let filledAt: number | undefined;
    read: while (out.length < limit) {
      const want = Math.min(limit - out.length, 1000);
      const records = await this.logRecords
        .find({ last: { $gte: expected } })
        .sort({ _id: 1 })
        .limit(want)
        .toArray();
      for (const record of records) {
        // Skips an aborted record inside a range a commit won (a filler that lost the race to it).
        if (record.last < expected) continue;
        if (record._id > expected) {
          // Filled already and still missing: this reader lags the primary (a secondary); stop here.
          if (this.readonly || filledAt === expected || !this.gapExpired(expected)) break read;
          await this.fill(expected, record._id - 1);
          filledAt = expected;
          continue read;
        }
        for (let i = expected - record._id; i < record.entries.length && out.length < limit; i++) {
          out.push(toEntry(record._id + i, record.entries[i]!));
        }
        if (out.length >= limit) break read;
        expected = record.last + 1;
      }
      if (records.length < want) break;
    }
    for (const position of this.gapsSeen.keys()) if (position < expected) this.gapsSeen.delete(position);
    return out;
  }

  private gapExpired(position: number): boolean {
    const now = performance.now();
    const seen = this.gapsSeen.get(position);
    if (seen === undefined) this.gapsSeen.set(position, now);
    return now - (seen ?? now) >= this.gapTimeoutMs;
  }

  async ping(): Promise<void> {
    await translated(() => this.db.command({ ping: 1 }));
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

/** How often a log waiter looks at the head. */
const HEAD_POLL_MS = 50;

/** Sleeps `ms`, or less when `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function toEntry(position: number, entry: EntryDoc): LogEntry {
  return {
    position,
    entity: entry.entity,
    id: entry.id,
    op: entry.op,
    payload: entry.payload,
    previous: entry.previous,
    createdAt: entry.created_at,
  };
}

function result(record: LogDoc): CommitResult {
  const records: StoredRecord[] = record.entries.map((e) => ({
    id: e.id,
    createdAt: e.created_at,
    payload: (e.op === 'delete' ? e.previous : e.payload) ?? {},
  }));
  return { records, position: record.last };
}

/** Swallows duplicate-key failures (an idempotent re-apply); rethrows anything else. */
function ignoreDuplicate(error: unknown): void {
  if (error instanceof MongoBulkWriteError) {
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (writeErrors.length > 0 && writeErrors.every((e) => e.code === 11000)) return;
    throw error;
  }
  if (duplicateKeyIndex(error) !== undefined) return;
  throw toStoreError(error);
}

/** Opens a MongoDB primary store (see MongoPrimaryStoreOptions). */
export function openMongoPrimaryStore(options: MongoPrimaryStoreOptions): Promise<MongoPrimaryStore> {
  return MongoPrimaryStore.open(options);
}
