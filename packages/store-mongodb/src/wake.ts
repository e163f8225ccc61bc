import { VersionSignal } from '@eggmesh/store';
import type { Db } from 'mongodb';

/** How a waiter learns that the watched collections changed. */
export type WakeMode = 'change-stream' | 'poll';

/** The bounded poll: the first re-check after this long, then backing off while nothing moves. */
export const POLL_FIRST_MS = 20;
export const POLL_MAX_MS = 100;
/** With a change stream, waiters still re-check this often (a stream that silently stalls costs at most this). */
const STREAM_SAFETY_MS = 1000;

/**
 * Wakes waiters when documents of some collections change. `auto` opens a change stream on each
 * collection when the server has them (a replica set; mongo-java-server with its oplog enabled) and
 * falls back to a bounded poll otherwise (a standalone, the test server without oplog): the waiter
 * then re-checks after 20 ms, backing off to 100 ms while nothing moves. Either way no caller spins.
 *
 * `version` is bumped on every change event; `next(seen, …)` returns at once when it moved past
 * `seen`, so an event between a caller's check and its wait is never missed.
 */
export class Wake extends VersionSignal {
  private streams: { close(): Promise<void> }[] = [];

  private constructor(public mode: WakeMode) {
    super();
  }

  /** Watches the collections `names` of `db` (and `moreNames` of `moreDb`, a second database). */
  static async open(
    db: Db,
    names: readonly string[],
    want: 'auto' | WakeMode,
    moreDb: Db = db,
    moreNames: readonly string[] = [],
  ): Promise<Wake> {
    if (want === 'poll') return new Wake('poll');
    const wake = new Wake('change-stream');
    try {
      // A probe tells whether the server has change streams (its first getMore fails at once if
      // not); a stream used as an iterator cannot become an event emitter, so it is a separate one.
      const probe = db.collection(names[0] ?? 'wake_probe').watch([], { maxAwaitTimeMS: 1 });
      try {
        await probe.tryNext();
      } finally {
        await probe.close().catch(() => undefined);
      }
      const watched = [
        ...names.map((name) => [db, name] as const),
        ...moreNames.map((name) => [moreDb, name] as const),
      ];
      for (const [source, name] of watched) {
        const stream = source.collection(name).watch([], { maxAwaitTimeMS: 500 });
        wake.streams.push(stream);
        stream.on('change', () => wake.bump());
        stream.on('error', () => wake.fallBack());
      }
    } catch {
      await wake.fallBack();
    }
    return wake;
  }

  /**
   * Resolves after a change event past `seen`, or after `pollMs` in poll mode (the caller re-checks),
   * or `maxMs` at the latest, or on abort.
   */
  wait(seen: number, maxMs: number, pollMs: number, signal?: AbortSignal): Promise<void> {
    return this.next(seen, Math.min(maxMs, this.mode === 'poll' ? pollMs : STREAM_SAFETY_MS), signal);
  }

  private async fallBack(): Promise<void> {
    this.mode = 'poll';
    const streams = this.streams.splice(0);
    this.bump();
    await Promise.all(streams.map((s) => s.close().catch(() => undefined)));
  }

  async close(): Promise<void> {
    this.ended = true;
    const streams = this.streams.splice(0);
    this.wakeAll();
    await Promise.all(streams.map((s) => s.close().catch(() => undefined)));
  }
}

/** Waits until `check` says yes, `timeoutMs` passed, or `signal` aborted; answers the last check. */
export async function waitUntil(
  wake: Wake,
  check: () => Promise<boolean>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  let pollMs = POLL_FIRST_MS;
  for (;;) {
    const seen = wake.version;
    if (await check()) return true;
    const remaining = deadline - performance.now();
    if (remaining <= 0 || signal?.aborted) return false;
    await wake.wait(seen, remaining, pollMs, signal);
    pollMs = Math.min(POLL_MAX_MS, Math.round(pollMs * 1.5));
  }
}
