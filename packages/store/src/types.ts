import type { EntityName } from '@eggmesh/schema';

/** A stored document as a client may see it: the newest live version at the time asked. */
export interface StoredRecord {
  readonly id: string;
  /** The payload without `id`. */
  readonly payload: Record<string, unknown>;
  /** When this version was written (epoch ms); unique and strictly increasing per id. */
  readonly createdAt: number;
}

export type Operation = 'create' | 'update' | 'delete';

export type WriteOperation =
  | {
      readonly op: 'create';
      readonly entity: EntityName;
      readonly id: string;
      readonly payload: Record<string, unknown>;
    }
  | {
      readonly op: 'update';
      readonly entity: EntityName;
      readonly id: string;
      readonly payload: Record<string, unknown>;
    }
  | { readonly op: 'delete'; readonly entity: EntityName; readonly id: string };

/** One accepted change, as the event log holds it. */
export interface LogEntry {
  /** Monotonic; gapless on SQLite. The first entry is 1. */
  readonly position: number;
  readonly entity: EntityName;
  readonly id: string;
  readonly op: Operation;
  /** The new payload (`null` for a delete). */
  readonly payload: Record<string, unknown> | null;
  /** The payload this change replaced (`null` for a create). */
  readonly previous: Record<string, unknown> | null;
  /** Equals the version's `createdAt`; non-decreasing in position order. */
  readonly createdAt: number;
}

export interface CommitResult {
  /** One per operation, in order. */
  readonly records: readonly StoredRecord[];
  /** The log position of the last entry the commit appended. */
  readonly position: number;
}

export interface ReadOptions {
  /** Read as of this time (epoch ms): the newest version with `createdAt <= at`. */
  readonly at?: number | undefined;
}

export interface PageOptions extends ReadOptions {
  /** At most this many rows. */
  readonly limit: number;
  /** Only rows whose id sorts after this one (keyset cursor). */
  readonly after?: string | undefined;
}

/** Paging of a batched `findByAny`, applied to each value on its own (relation fields). */
export interface RelationPageOptions extends ReadOptions {
  /** At most this many rows per value, the first in id order; all of them when absent. */
  readonly limit?: number | undefined;
  /** Only rows whose id sorts after this one (the same cursor for every value). */
  readonly after?: string | undefined;
}

/** Reads entities; every method hides deleted ones. */
export interface EntityReader {
  get(entity: EntityName, id: string, options?: ReadOptions): Promise<StoredRecord | null>;
  /** Batched `get`: the live records among `ids`, in no particular order. */
  getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions): Promise<StoredRecord[]>;
  /** Rows whose indexed `field` equals `value`, ordered by id. */
  findBy(entity: EntityName, field: string, value: string, options: PageOptions): Promise<StoredRecord[]>;
  /**
   * Batched `findBy` over many values (relation loaders), in no particular order across values;
   * `limit` and `after` page each value's rows on their own.
   */
  findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): Promise<StoredRecord[]>;
  /** All live rows, ordered by id. */
  list(entity: EntityName, options: PageOptions): Promise<StoredRecord[]>;
}

/** The write side: versions and the log entry commit in one transaction, all operations or none. */
export interface EntityWriter {
  commit(operations: readonly WriteOperation[]): Promise<CommitResult>;
}

/** The event log as a consumer (projector, relay, read-your-writes waits) sees it. */
export interface EventLog {
  /** Entries with `position > after`, in position order, at most `limit`. Never skips an entry that commits later. */
  read(after: number, limit: number): Promise<LogEntry[]>;
  /** The newest position a consumer may read up to (0 for an empty log). */
  head(): Promise<number>;
  /**
   * Resolves `true` once the head may have moved beyond `after` (at once if it already has), `false`
   * when `timeoutMs` passed or `signal` aborted first. Adapters wake on their backend's own change
   * signal (file watch, change stream, broker fetch) or a bounded internal poll; callers never spin.
   */
  waitBeyond(after: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /**
   * The consumer has durably applied everything up to `position` (its checkpoint committed).
   * Kafka commits its offsets here; the store logs do nothing.
   */
  acknowledge(position: number): Promise<void>;
  close(): Promise<void>;
}

/** What the write service needs from its primary. */
export interface PrimaryStore extends EntityReader, EntityWriter {
  /** The store's own log; its `close()` is a no-op (the store owns it). */
  readonly log: EventLog;
  /** Answers when storage is reachable; throws otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
