import type { EntityName } from '@eggmesh/schema';
import {
  type CommitResult,
  type EventLog,
  type LoadedProjections,
  type LogEntry,
  type PageOptions,
  type PrimaryStore,
  type ProjectionCommit,
  type ProjectionKeys,
  type ProjectionStore,
  type ReadOptions,
  type ReadStore,
  type RelationPageOptions,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
  type WriteOperation,
} from '@eggmesh/store';

export interface ConnectingOptions {
  /** Wait between attempts (ms). */
  readonly retryMs?: number;
  /** Told about every failed attempt (the service logs what is wrong). */
  readonly onError?: (error: unknown, attempt: number) => void;
  /** Told once connected. */
  readonly onOpen?: (attempts: number) => void;
}

/**
 * Opens something in the background and keeps trying until it opens: a service starts and answers
 * (`/ready` false, requests 503) while MongoDB is unreachable, and serves as soon as it answers.
 * Until then every use fails with STORE_UNAVAILABLE naming the last failure.
 */
export class Connecting<T extends { close(): Promise<void> }> {
  private value: T | undefined;
  private lastError: unknown;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  readonly ready: Promise<T>;

  constructor(open: () => Promise<T>, options: ConnectingOptions = {}) {
    this.ready = new Promise<T>((resolve) => {
      let attempt = 0;
      const tryOpen = async () => {
        this.timer = undefined;
        if (this.closed) return;
        attempt += 1;
        try {
          const value = await open();
          if (this.closed) {
            await value.close();
            return;
          }
          this.value = value;
          options.onOpen?.(attempt);
          resolve(value);
        } catch (error) {
          this.lastError = error;
          options.onError?.(error, attempt);
          if (!this.closed) this.timer = setTimeout(() => void tryOpen(), options.retryMs ?? 1000);
        }
      };
      void tryOpen();
    });
  }

  /** The opened value, or STORE_UNAVAILABLE while it is not open yet. */
  get(): T {
    if (this.value) return this.value;
    const why = this.lastError instanceof Error ? this.lastError.message : 'connecting';
    throw new StoreError(storeErrorCodes.UNAVAILABLE, `storage is not reachable yet: ${why}`, {
      cause: this.lastError,
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.value?.close();
  }
}

/** Runs `work` on the opened value; fails with STORE_UNAVAILABLE while there is none. */
const on = async <T extends { close(): Promise<void> }, R>(c: Connecting<T>, work: (v: T) => Promise<R>) =>
  work(c.get());

/** A PrimaryStore that connects in the background (see Connecting). */
export class ConnectingPrimaryStore implements PrimaryStore {
  readonly log: EventLog;
  constructor(readonly connecting: Connecting<PrimaryStore>) {
    this.log = {
      read: (after, limit) => on(connecting, (s) => s.log.read(after, limit)),
      head: () => on(connecting, (s) => s.log.head()),
      waitBeyond: (after, timeoutMs, signal) =>
        waitOpen(connecting, timeoutMs, signal, (s, ms) => s.log.waitBeyond(after, ms, signal), false),
      acknowledge: (position) => on(connecting, (s) => s.log.acknowledge(position)),
      close: async () => undefined,
    };
  }
  commit(operations: readonly WriteOperation[]): Promise<CommitResult> {
    return on(this.connecting, (s) => s.commit(operations));
  }
  get(entity: EntityName, id: string, options?: ReadOptions): Promise<StoredRecord | null> {
    return on(this.connecting, (s) => s.get(entity, id, options));
  }
  getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions): Promise<StoredRecord[]> {
    return on(this.connecting, (s) => s.getMany(entity, ids, options));
  }
  findBy(entity: EntityName, field: string, value: string, options: PageOptions): Promise<StoredRecord[]> {
    return on(this.connecting, (s) => s.findBy(entity, field, value, options));
  }
  findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): Promise<StoredRecord[]> {
    return on(this.connecting, (s) => s.findByAny(entity, field, values, options));
  }
  list(entity: EntityName, options: PageOptions): Promise<StoredRecord[]> {
    return on(this.connecting, (s) => s.list(entity, options));
  }
  ping(): Promise<void> {
    return on(this.connecting, (s) => s.ping());
  }
  close(): Promise<void> {
    return this.connecting.close();
  }
}

/** A ReadStore that connects in the background (see Connecting). */
export class ConnectingReadStore implements ReadStore {
  constructor(readonly connecting: Connecting<ReadStore>) {}
  replicaPosition(): Promise<number> {
    return on(this.connecting, (s) => s.replicaPosition());
  }
  projectionPosition(): Promise<number> {
    return on(this.connecting, (s) => s.projectionPosition());
  }
  async changed(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    await waitOpen(this.connecting, timeoutMs, signal, (s, ms) => s.changed(ms, signal), undefined);
  }
  get(entity: EntityName, id: string, options?: ReadOptions): Promise<StoredRecord | null> {
    return on(this.connecting, (s) => s.get(entity, id, options));
  }
  getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions): Promise<StoredRecord[]> {
    return on(this.connecting, (s) => s.getMany(entity, ids, options));
  }
  findBy(entity: EntityName, field: string, value: string, options: PageOptions): Promise<StoredRecord[]> {
    return on(this.connecting, (s) => s.findBy(entity, field, value, options));
  }
  findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): Promise<StoredRecord[]> {
    return on(this.connecting, (s) => s.findByAny(entity, field, values, options));
  }
  list(entity: EntityName, options: PageOptions): Promise<StoredRecord[]> {
    return on(this.connecting, (s) => s.list(entity, options));
  }
  ping(): Promise<void> {
    return on(this.connecting, (s) => s.ping());
  }
  close(): Promise<void> {
    return this.connecting.close();
  }
}

/** A ProjectionStore that connects in the background (see Connecting). */
export class ConnectingProjectionStore implements ProjectionStore {
  constructor(readonly connecting: Connecting<ProjectionStore>) {}
  checkpoint(): Promise<number> {
    return on(this.connecting, (s) => s.checkpoint());
  }
  load(keys: ProjectionKeys): Promise<LoadedProjections> {
    return on(this.connecting, (s) => s.load(keys));
  }
  commit(batch: ProjectionCommit): Promise<void> {
    return on(this.connecting, (s) => s.commit(batch));
  }
  close(): Promise<void> {
    return this.connecting.close();
  }
}

/** An EventLog that connects in the background (see Connecting); `close` closes it. */
export class ConnectingEventLog implements EventLog {
  constructor(readonly connecting: Connecting<EventLog>) {}
  read(after: number, limit: number): Promise<LogEntry[]> {
    return on(this.connecting, (s) => s.read(after, limit));
  }
  head(): Promise<number> {
    return on(this.connecting, (s) => s.head());
  }
  waitBeyond(after: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return waitOpen(this.connecting, timeoutMs, signal, (s, ms) => s.waitBeyond(after, ms, signal), false);
  }
  acknowledge(position: number): Promise<void> {
    return on(this.connecting, (s) => s.acknowledge(position));
  }
  close(): Promise<void> {
    return this.connecting.close();
  }
}

/**
 * Waits for the value to open (at most `timeoutMs`), then runs `work` with the time left; answers
 * `none` when it did not open in time or `signal` aborted.
 */
async function waitOpen<T extends { close(): Promise<void> }, R>(
  connecting: Connecting<T>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  work: (value: T, ms: number) => Promise<R>,
  none: R,
): Promise<R> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const gaveUp = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
    onAbort = () => resolve(undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const value = await Promise.race([connecting.ready, gaveUp]);
    if (value === undefined || signal?.aborted) return none;
    return await work(value, Math.max(0, timeoutMs - (performance.now() - started)));
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
