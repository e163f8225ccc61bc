import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { VersionSignal } from '@eggmesh/store';

/** After a burst of file events, wake-ups at these delays (ms) from each other (see ChangeSignal). */
const SETTLE_MS = [1, 4, 16];

/**
 * Wakes a waiter when SQLite files change, so a consumer of the log sleeps until a writer commits
 * instead of polling. It watches the directories (inotify on Linux), not the files: SQLite deletes
 * and re-creates its `-wal` file, which would end a watch on the file itself. A commit by another
 * process touches `<db>-wal`, so any change to a name starting with the database's name counts.
 *
 * Waiting is VersionSignal's: `next(seen, timeoutMs, signal)` never misses a change that lands
 * between a waiter's check and its wait.
 *
 * A file event can come before the change is visible: a commit writes its frames to the `-wal` file
 * (the event) and only then publishes them in the WAL index (shared memory, which raises no event). A
 * waiter woken by the event may look in between, see nothing new, and sleep on; with no later write it
 * would sleep until its timeout (a projector idle 1 s, measured). So every burst of events is followed
 * by a few more wake-ups, SETTLE_MS after it.
 */
export class ChangeSignal extends VersionSignal {
  private readonly watchers: FSWatcher[] = [];
  private settleTimer: NodeJS.Timeout | undefined;
  /** A file event arrived while the settle timer ran: start the settle steps over when it fires. */
  private eventSinceSettle = false;

  /** Watches the databases at `files` (any SQLite file paths; their `-wal`/`-shm` siblings count). */
  constructor(files: readonly string[]) {
    super();
    const byDir = new Map<string, string[]>();
    for (const file of files) {
      const dir = dirname(file);
      byDir.set(dir, [...(byDir.get(dir) ?? []), basename(file)]);
    }
    for (const [dir, names] of byDir) {
      try {
        const watcher = watch(dir, { persistent: false }, (_event, name) => {
          if (name === null || names.some((prefix) => name.startsWith(prefix))) this.changedOnDisk();
        });
        // A watched directory that disappears ends its watch; the fallback timeout still wakes waiters.
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // No watch possible (missing directory, no inotify): waiters fall back to their timeout.
      }
    }
  }

  private changedOnDisk(): void {
    this.bump();
    if (this.settleTimer) this.eventSinceSettle = true;
    else this.settle(0);
  }

  private settle(step: number): void {
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      this.bump();
      if (this.eventSinceSettle) {
        this.eventSinceSettle = false;
        this.settle(0);
      } else if (step + 1 < SETTLE_MS.length) this.settle(step + 1);
    }, SETTLE_MS[step]);
    this.settleTimer.unref();
  }

  close(): void {
    clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    for (const watcher of this.watchers) watcher.close();
    this.watchers.length = 0;
    this.wakeAll();
  }
}
