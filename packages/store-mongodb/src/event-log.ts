import type { EntityName } from '@eggmesh/schema';
import type { EventLog, LogEntry, Operation } from '@eggmesh/store';
import type { Collection, Db, MongoClient } from 'mongodb';
import { type ConnectOptions, connect } from './client-limits.js';
import { Connecting, ConnectingEventLog, type ConnectingOptions } from './connecting.js';
import { ignoreDuplicate, translated } from './errors.js';
import { Wake, type WakeMode, waitUntil } from './wake.js';

export const LOG = 'event_log';

/** One entry inside a log record. */
export interface EntryDoc {
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
export interface LogDoc {
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

/** Closes positions first … last with aborted records, stopping at one that exists. */
export async function fillPositions(log: Collection<LogDoc>, first: number, last: number): Promise<void> {
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
  await log.insertMany(records, { ordered: true }).catch(ignoreDuplicate);
}

export function toEntry(position: number, entry: EntryDoc): LogEntry {
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

export interface MongoEventLogOptions {
  /** A position missing for this long (ms) is closed with an aborted record (unless `fillGaps` is false). */
  readonly gapTimeoutMs?: number;
  /** Whether this reader closes expired gaps (the projector and the writer do; the read side does not). */
  readonly fillGaps?: boolean;
  /** How waiters wake: a change stream when the server has one (`auto`), or the bounded poll. */
  readonly wake?: 'auto' | WakeMode;
  /** A client this log owns: `close` closes it. */
  readonly owner?: MongoClient;
}

/** Records read per round trip while walking the log. */
const PAGE = 1000;
/** Positions looked back per query for the commit holding a position. */
const BACK = 256;

/**
 * The event log on MongoDB (the `EventLog` port). Its head is the end of the **contiguous prefix**:
 * the highest position below which every position holds a commit record or an aborted one. Without
 * transactions, positions are reserved (counter) before their record is written, so a later record
 * can be in while an earlier one is not yet: the head stops before such a gap, and `read` never
 * returns anything past it, so a consumer can never skip an entry that commits later. A gap that
 * stays open for `gapTimeoutMs` (its writer died) is closed with an aborted record by a reader
 * allowed to fill; the writer's late insert then fails on the unique `_id` and is not acknowledged.
 *
 * `waitBeyond` wakes on a change stream of `event_log` where the server has change streams, and
 * otherwise on a bounded poll of the head (20 ms, backing off to 100 ms while idle).
 */
export class MongoEventLog implements EventLog {
  readonly records: Collection<LogDoc>;
  private readonly db: Db;
  private readonly gapTimeoutMs: number;
  private readonly fillGaps: boolean;
  /** When this reader first saw each missing position (performance.now()). */
  private readonly gapsSeen = new Map<number, number>();
  /** The contiguous prefix as last seen; it only grows. */
  private known = 0;
  /** Every record up to this position was seen applied (see `appliedUpTo`). */
  private applied = 0;
  /** Whether `known` is the last position of a record (a walk from it needs no look back). */
  private knownIsEnd = true;
  private wake: Promise<Wake> | undefined;
  private readonly wakeMode: 'auto' | WakeMode;
  private readonly owner: MongoClient | undefined;

  constructor(db: Db, options: MongoEventLogOptions = {}) {
    this.db = db;
    this.records = db.collection<LogDoc>(LOG);
    this.gapTimeoutMs = options.gapTimeoutMs ?? 5000;
    this.fillGaps = options.fillGaps ?? true;
    this.wakeMode = options.wake ?? 'auto';
    this.owner = options.owner;
  }

  /**
   * A reader of the same log through `db` (a session-bound view of it) that starts from what this one
   * has walked: its contiguous prefix and applied position. Only sound when `db`'s reads are ordered
   * after the reads that taught this one those positions (a causally consistent session advanced past
   * them: `MongoReadStore.view`). Never fills gaps, polls when it waits.
   */
  fork(db: Db): MongoEventLog {
    const fork = new MongoEventLog(db, { fillGaps: false, wake: 'poll', gapTimeoutMs: this.gapTimeoutMs });
    fork.known = this.known;
    fork.knownIsEnd = this.knownIsEnd;
    fork.applied = this.applied;
    return fork;
  }

  /** How `waitBeyond` wakes: `change-stream` or `poll` (opens the wake if no wait has yet). */
  async wakeKind(): Promise<WakeMode> {
    return (await this.waker()).mode;
  }

  private waker(): Promise<Wake> {
    this.wake ??= Wake.open(this.db, [LOG], this.wakeMode);
    return this.wake;
  }

  head(): Promise<number> {
    return translated(async () => {
      await this.walk(this.known, Number.POSITIVE_INFINITY, undefined);
      return this.known;
    });
  }

  read(after: number, limit: number): Promise<LogEntry[]> {
    return translated(async () => {
      const out: LogEntry[] = [];
      if (limit >= 1) await this.walk(after, limit, out);
      return out;
    });
  }

  async waitBeyond(after: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if ((await this.head()) > after) return true;
    const wake = await this.waker();
    return waitUntil(wake, async () => (await this.head()) > after, timeoutMs, signal);
  }

  /** The store logs keep no consumer offsets: the consumer's checkpoint is its own. */
  async acknowledge(_position: number): Promise<void> {}

  async close(): Promise<void> {
    const wake = this.wake;
    this.wake = undefined;
    if (wake) await (await wake).close();
    await this.owner?.close();
  }

  /**
   * Walks records from `after + 1` in position order up to the first missing position (or `limit`
   * entries when `out` collects them), closing expired gaps when allowed; advances `known`.
   *
   * Every query is an `_id` lookup (`$in` over the next positions), the one index every MongoDB-wire
   * server uses: mongo-java-server ignores non-unique indexes and answers any range filter with a
   * scan of the whole log, which made each head poll cost O(log).
   */
  private async walk(after: number, limit: number, out: LogEntry[] | undefined): Promise<void> {
    let expected = after + 1;
    let filledAt: number | undefined;
    const projection = out ? undefined : { _id: 1, last: 1 };
    const take = (record: LogDoc) => {
      if (out) {
        for (let i = expected - record._id; i < record.entries.length && out.length < limit; i++) {
          out.push(toEntry(record._id + i, record.entries[i]!));
        }
      }
    };
    // `after` may end inside a multi-entry commit (a read that stopped at its limit): that commit
    // starts before `expected`, so look back for it unless `after` is known to end a record.
    if (after > 0 && !(after === this.known && this.knownIsEnd)) {
      const holder = await this.recordBefore(expected, projection);
      if (holder && holder.last >= expected) {
        take(holder);
        if (out && out.length >= limit) {
          this.advance(out[out.length - 1]!.position, false);
          return;
        }
        expected = holder.last + 1;
      }
    }
    read: for (;;) {
      // A full window of positions (a gap is seen up to PAGE positions ahead), but no more records
      // than entries still wanted (each commit record holds at least one).
      const window = Array.from({ length: PAGE }, (_, i) => expected + i);
      const end = expected + PAGE;
      const most = out ? Math.min(limit - out.length, PAGE) : PAGE;
      const records = await this.records
        .find({ _id: { $in: window } }, projection ? { projection } : {})
        .sort({ _id: 1 })
        .limit(most)
        .toArray();
      for (const record of records) {
        // Skips an aborted record inside a range a commit won (a filler that lost the race to it).
        if (record.last < expected) continue;
        if (record._id > expected) {
          // Filled already and still missing: this reader lags the primary (a secondary); stop here.
          if (!this.fillGaps || filledAt === expected || !this.gapExpired(expected)) break read;
          await fillPositions(this.records, expected, record._id - 1);
          filledAt = expected;
          continue read;
        }
        take(record);
        if (out && out.length >= limit) {
          const last = out[out.length - 1]!.position;
          this.advance(last, last === record.last);
          break read;
        }
        expected = record.last + 1;
      }
      // No record starts at `expected` within the window: the end of the log (or a gap longer than
      // the window, which the next walk meets once records past it are in reach).
      if (records.length < most && expected < end) break;
    }
    this.advance(expected - 1, true);
    for (const position of this.gapsSeen.keys()) if (position < expected) this.gapsSeen.delete(position);
  }

  /** The record with the highest `_id` below `position` (looking back 256 positions at a time). */
  private async recordBefore(
    position: number,
    projection: { _id: number; last: number } | undefined,
  ): Promise<LogDoc | undefined> {
    for (let top = position - 1; top >= 1; top -= BACK) {
      const window = Array.from({ length: Math.min(BACK, top) }, (_, i) => top - i);
      const [record] = await this.records
        .find({ _id: { $in: window } }, projection ? { projection } : {})
        .sort({ _id: -1 })
        .limit(1)
        .toArray();
      if (record) return record;
    }
    return undefined;
  }

  /**
   * The highest position up to `head` below which every commit record is applied (its versions in
   * place), walking forward from where the last call stopped with `_id` lookups (`applied` only ever
   * turns true, so what was seen applied stays so).
   */
  async appliedUpTo(head: number): Promise<number> {
    return translated(async () => {
      let expected = this.applied + 1;
      while (expected <= head) {
        const window = Array.from({ length: Math.min(PAGE, head - expected + 1) }, (_, i) => expected + i);
        const records = await this.records
          .find({ _id: { $in: window } }, { projection: { _id: 1, last: 1, applied: 1 } })
          .sort({ _id: 1 })
          .toArray();
        let moved = false;
        for (const record of records) {
          if (record.last < expected) continue;
          if (record._id > expected || !record.applied) break;
          expected = record.last + 1;
          moved = true;
        }
        this.applied = Math.max(this.applied, Math.min(expected - 1, head));
        if (!moved || expected < window[window.length - 1]! + 1) break;
      }
      return Math.min(this.applied, head);
    });
  }

  /** Everything up to `position` was seen contiguous (positions are never removed). */
  private advance(position: number, atRecordEnd: boolean): void {
    if (position > this.known) {
      this.known = position;
      this.knownIsEnd = atRecordEnd;
    }
  }

  private gapExpired(position: number): boolean {
    const now = performance.now();
    const seen = this.gapsSeen.get(position);
    if (seen === undefined) this.gapsSeen.set(position, now);
    return now - (seen ?? now) >= this.gapTimeoutMs;
  }
}

export interface OpenMongoEventLogOptions extends Omit<MongoEventLogOptions, 'owner'> {
  readonly uri: string;
  readonly dbName: string;
  readonly serverSelectionTimeoutMS?: number;
}

/** Opens the event log of a database on a client of its own (the projector's log source). */
export function openMongoEventLog(options: OpenMongoEventLogOptions): Promise<MongoEventLog> {
  const connectOptions: ConnectOptions = {
    uri: options.uri,
    readPreference: 'primary',
    ...(options.serverSelectionTimeoutMS === undefined
      ? {}
      : { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS }),
  };
  return connect(
    connectOptions,
    async (client) => new MongoEventLog(client.db(options.dbName), { ...options, owner: client }),
  );
}

/**
 * The log, connecting in the background: the port at once, calls answer STORE_UNAVAILABLE (and waits
 * wait) until MongoDB answers, retried every second. What the projector's and relay's entry files use.
 */
export function connectingMongoEventLog(
  options: Pick<OpenMongoEventLogOptions, 'uri' | 'dbName'>,
  connecting: ConnectingOptions = {},
): ConnectingEventLog {
  return new ConnectingEventLog(
    new Connecting(() => openMongoEventLog({ ...options, serverSelectionTimeoutMS: 5000 }), connecting),
  );
}
