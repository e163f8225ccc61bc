/**
 * "Wait for a version change, a timeout or an abort", shared by the adapters' change signals (SQLite's
 * file watch, MongoDB's change streams or poll). A source of changes calls `bump()`; a waiter reads
 * `version` before its check and passes it to `next(seen, …)`, which returns at once when `version`
 * moved past `seen`, so a change between the check and the wait is never missed.
 */
export class VersionSignal {
  /** Bumped on every change seen. */
  version = 0;
  /** Once true, `next` returns at once (the signal was closed). */
  protected ended = false;
  private readonly waiters = new Set<() => void>();

  /** Resolves when a change arrives after `seen`, after `timeoutMs` at the latest, or when `signal` aborts. */
  next(seen: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.version !== seen || signal?.aborted || this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }

  /** Waiters now. */
  protected get waiting(): number {
    return this.waiters.size;
  }

  /** A change: wakes every waiter. */
  bump(): void {
    this.version += 1;
    this.wakeAll();
  }

  /** Wakes every waiter without a change (closing). */
  protected wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
