import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * Wakes a waiter when SQLite files change, so a consumer of the log sleeps until a writer commits
 * instead of polling. It watches the directories (inotify on Linux), not the files: SQLite deletes
 * and re-creates its `-wal` file, which would end a watch on the file itself. A commit by another
 * process touches `<db>-wal`, so any change to a name starting with the database's name counts.
 *
 * Waiters compare `version` before their check and after: a change that lands between a check and
 * the wait is never missed (`next(seen)` returns at once when `version` moved past `seen`).
 */
export class ChangeSignal {
  /** Bumped on every change seen. */
  version = 0;
  private readonly watchers: FSWatcher[] = [];
  private readonly waiters = new Set<() => void>();

  /** Watches the databases at `files` (any SQLite file paths; their `-wal`/`-shm` siblings count). */
  constructor(files: readonly string[]) {
    const byDir = new Map<string, string[]>();
    for (const file of files) {
      const dir = dirname(file);
      byDir.set(dir, [...(byDir.get(dir) ?? []), basename(file)]);
    }
    for (const [dir, names] of byDir) {
      try {
        const watcher = watch(dir, { persistent: false }, (_event, name) => {
          if (name === null || names.some((prefix) => name.startsWith(prefix))) this.bump();
        });
        // A watched directory that disappears ends its watch; the fallback timeout still wakes waiters.
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // No watch possible (missing directory, no inotify): waiters fall back to their timeout.
      }
    }
  }

  /**
   * Resolves when a change arrives after `seen` (a `version` read before the caller's last check),
   * after `timeoutMs` at the latest, or when `signal` aborts.
   */
  next(seen: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.version !== seen || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }

  close(): void {
    for (const watcher of this.watchers) watcher.close();
    this.watchers.length = 0;
    for (const wake of [...this.waiters]) wake();
  }

  private bump(): void {
    this.version += 1;
    for (const wake of [...this.waiters]) wake();
  }
}
