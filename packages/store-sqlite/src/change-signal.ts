import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { VersionSignal } from '@eggmesh/store';

/**
 * Wakes a waiter when SQLite files change, so a consumer of the log sleeps until a writer commits
 * instead of polling. It watches the directories (inotify on Linux), not the files: SQLite deletes
 * and re-creates its `-wal` file, which would end a watch on the file itself. A commit by another
 * process touches `<db>-wal`, so any change to a name starting with the database's name counts.
 *
 * Waiting is VersionSignal's: `next(seen, timeoutMs, signal)` never misses a change that lands
 * between a waiter's check and its wait.
 */
export class ChangeSignal extends VersionSignal {
  private readonly watchers: FSWatcher[] = [];

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

  close(): void {
    for (const watcher of this.watchers) watcher.close();
    this.watchers.length = 0;
    this.wakeAll();
  }
}
