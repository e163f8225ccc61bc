import {
  type EventLog,
  type PrimaryStore,
  type ProjectionStore,
  type ReadStore,
  type ReadView,
  StoreError,
  storeErrorCodes,
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
  /**
   * Settles once the first attempt did (opened, failed, or the value was closed): a caller that waits
   * for it before `get()` meets the outcome of that attempt, not "still connecting" while a reachable
   * server is merely slow to open (a fresh database creating its indexes).
   */
  readonly firstAttempt: Promise<void>;
  private firstAttemptDone: () => void = () => undefined;

  constructor(open: () => Promise<T>, options: ConnectingOptions = {}) {
    this.firstAttempt = new Promise<void>((resolve) => {
      this.firstAttemptDone = resolve;
    });
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
        } finally {
          this.firstAttemptDone();
        }
      };
      void tryOpen();
    });
  }

  /** The opened value, undefined while it is not open yet. */
  current(): T | undefined {
    return this.value;
  }

  /** The opened value, or STORE_UNAVAILABLE while it is not open yet. */
  get(): T {
    if (this.value) return this.value;
    const why = this.lastError instanceof Error ? this.lastError.message : 'connecting';
    throw new StoreError(storeErrorCodes.UNAVAILABLE, `storage is not open yet: ${why}`, {
      cause: this.lastError,
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.firstAttemptDone();
    if (this.timer) clearTimeout(this.timer);
    await this.value?.close();
  }
}

type AsyncMethod = (...args: never[]) => Promise<unknown>;
/** The names of T's members that are methods answering a promise. */
type AsyncMethodNames<T> = { [K in keyof T]-?: T[K] extends AsyncMethod ? K : never }[keyof T];

/**
 * The methods `names` of whatever `get()` answers when called, each calling it through: a promise
 * rejected with `get()`'s error (STORE_UNAVAILABLE while nothing is open), else the method's own.
 */
export function delegate<T, K extends AsyncMethodNames<T>>(get: () => T, names: readonly K[]): Pick<T, K> {
  const out: Partial<Record<K, (...args: unknown[]) => Promise<unknown>>> = {};
  for (const name of names) {
    out[name] = async (...args: unknown[]) => {
      const value = get();
      const method: unknown = value[name];
      if (typeof method !== 'function') throw new TypeError(`${String(name)} is not a method`);
      return method.apply(value, args);
    };
  }
  // Sound: each entry takes the arguments of T[K] and answers the promise T[K] answers.
  return out as unknown as Pick<T, K>;
}

/**
 * A base class whose instances delegate the methods `names` to the value `connecting` opened, and
 * whose `close` closes it: the wrappers below add only what is not plain delegation.
 */
function Delegating<T extends { close(): Promise<void> }, K extends AsyncMethodNames<T>>(
  names: readonly K[],
  waitFirstAttempt = false,
) {
  class Base {
    constructor(readonly connecting: Connecting<T>) {
      const direct = delegate(() => connecting.get(), names);
      Object.assign(this, waitFirstAttempt ? afterFirstAttempt(connecting, direct, names) : direct);
    }
    close(): Promise<void> {
      return this.connecting.close();
    }
  }
  return Base as new (
    connecting: Connecting<T>,
  ) => Base & Pick<T, K>;
}

/**
 * The methods `names` of `direct`, each waiting for the first attempt to open before it calls through:
 * for the background loops (projector, relay), whose first call at start would otherwise fail (and be
 * logged) while a reachable server is still opening.
 */
function afterFirstAttempt<T extends { close(): Promise<void> }, K extends AsyncMethodNames<T>>(
  connecting: Connecting<T>,
  direct: Pick<T, K>,
  names: readonly K[],
): Pick<T, K> {
  const out: Partial<Record<K, (...args: unknown[]) => Promise<unknown>>> = {};
  for (const name of names) {
    const call = direct[name] as unknown as (...args: unknown[]) => Promise<unknown>;
    out[name] = async (...args: unknown[]) => {
      await connecting.firstAttempt;
      return call(...args);
    };
  }
  // Sound: each entry takes the arguments of T[K] and answers the promise T[K] answers.
  return out as unknown as Pick<T, K>;
}

const READS = ['get', 'getMany', 'findBy', 'findByAny', 'list', 'ping'] as const;
const LOG_CALLS = ['read', 'head', 'acknowledge'] as const;

/** A PrimaryStore that connects in the background (see Connecting). */
export class ConnectingPrimaryStore
  extends Delegating<PrimaryStore, 'commit' | (typeof READS)[number]>(['commit', ...READS])
  implements PrimaryStore
{
  readonly log: EventLog;
  constructor(connecting: Connecting<PrimaryStore>) {
    super(connecting);
    this.log = {
      ...delegate(() => connecting.get().log, LOG_CALLS),
      waitBeyond: (after, timeoutMs, signal) =>
        waitOpen(connecting, timeoutMs, signal, (s, ms) => s.log.waitBeyond(after, ms, signal), false),
      close: async () => undefined,
    };
  }
}

/** A ReadStore that connects in the background (see Connecting). */
export class ConnectingReadStore
  extends Delegating<
    ReadStore,
    | 'replicaPosition'
    | 'projectionPosition'
    | 'projectionChanges'
    | 'query'
    | 'aggregate'
    | (typeof READS)[number]
  >(['replicaPosition', 'projectionPosition', 'projectionChanges', 'query', 'aggregate', ...READS])
  implements ReadStore
{
  async changed(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    await waitOpen(this.connecting, timeoutMs, signal, (s, ms) => s.changed(ms, signal), undefined);
  }

  /** The open store's view; before it opens, this wrapper (whose every read fails STORE_UNAVAILABLE). */
  view(): ReadView {
    return this.connecting.current()?.view?.() ?? this;
  }

  /** Ends nothing: a view of a store not yet open holds no session. */
  async end(): Promise<void> {}
}

/** A ProjectionStore that connects in the background (see Connecting); calls wait for the first attempt. */
export class ConnectingProjectionStore
  extends Delegating<ProjectionStore, 'checkpoint' | 'load' | 'commit'>(
    ['checkpoint', 'load', 'commit'],
    true,
  )
  implements ProjectionStore {}

/** An EventLog that connects in the background (see Connecting); calls wait for the first attempt; `close` closes it. */
export class ConnectingEventLog
  extends Delegating<EventLog, (typeof LOG_CALLS)[number]>(LOG_CALLS, true)
  implements EventLog
{
  waitBeyond(after: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return waitOpen(this.connecting, timeoutMs, signal, (s, ms) => s.waitBeyond(after, ms, signal), false);
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
