import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { VersionSignal } from '@eggmesh/store';

/** After a burst of file events, wake-ups at these delays (ms) from each other (see ChangeSignal). */
const SETTLE_MS = [1, 4, 16];

export interface ChangeSignalOptions {
  /**
   * Watch only while someone waits, and this long after the last wait (ms); undefined: always. A process
   * that rarely waits (a read side: only reads that ask for a log position wait) is then not woken by
   * every commit of another process. The first wait after the watch was off returns at once with a
   * change counted: nothing was watched before it, so the waiter must look again.
   */
  readonly watchWhileWaitedMs?: number;
}

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
  private readonly byDir = new Map<string, string[]>();
  private settleTimer: NodeJS.Timeout | undefined;
  /** A file event arrived while the settle timer ran: start the settle steps over when it fires. */
  private eventSinceSettle = false;
  private readonly lazyMs: number | undefined;
  private lastWait = 0;
  private stopTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /** Watches the databases at `files` (any SQLite file paths; their `-wal`/`-shm` siblings count). */
  constructor(files: readonly string[], options: ChangeSignalOptions = {}) {
    super();
    for (const file of files) {
      const dir = dirname(file);
      this.byDir.set(dir, [...(this.byDir.get(dir) ?? []), basename(file)]);
    }
    this.lazyMs = options.watchWhileWaitedMs;
    if (this.lazyMs === undefined) this.watch();
  }

  /** Whether the files are watched now. */
  get watching(): boolean {
    return this.watchers.length > 0;
  }

  override next(seen: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.lazyMs !== undefined && !this.closed) {
      this.lastWait = Date.now();
      if (!this.watching) {
        this.watch();
        this.stopWhenUnused(this.lazyMs);
        this.bump();
      }
    }
    return super.next(seen, timeoutMs, signal);
  }

  /** Stops the watch once nobody has waited for `ms`. */
  private stopWhenUnused(ms: number): void {
    this.stopTimer = setTimeout(() => {
      this.stopTimer = undefined;
      const idle = Date.now() - this.lastWait;
      if (idle >= ms && this.waiting === 0) this.unwatch();
      else this.stopWhenUnused(Math.max(ms - idle, 10));
    }, ms);
    this.stopTimer.unref();
  }

  private watch(): void {
    for (const [dir, names] of this.byDir) {
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

  private unwatch(): void {
    clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    for (const watcher of this.watchers) watcher.close();
    this.watchers.length = 0;
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
    clearTimeout(this.stopTimer);
    this.stopTimer = undefined;
    this.closed = true;
    this.unwatch();
    this.wakeAll();
  }
}
