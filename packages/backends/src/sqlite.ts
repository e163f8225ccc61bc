import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProjectionStore } from '@eggmesh/store';
import {
  ChangeSignal,
  currentGeneration,
  dataFiles,
  newGenerationName,
  openBulkProjectionStore,
  openDatabase,
  openPrimaryStore,
  openPrimaryWhenCreated,
  openProjectionStore,
  openReadStore,
  ProjectionReader,
  promoteGeneration,
  removeStaleGenerations,
  SqliteReadStore,
} from '@eggmesh/store-sqlite';
import type { Backend, BackendConfig } from './types.js';

/** The embedded tier: SQLite files under `config.dataDir`. */
export function sqliteBackend(config: BackendConfig, say: (message: string) => void): Backend {
  const files = dataFiles(config.dataDir);
  const synchronous = config.sqliteSync;
  return {
    name: 'sqlite',
    describe: () => ({ store: 'sqlite', dataDir: config.dataDir, sync: synchronous }),
    async openWriteSide() {
      const primary = openPrimaryStore({ file: files.primary, synchronous });
      const reader = new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir));
      return {
        primary,
        reader,
        async close() {
          await reader.close();
          await primary.close();
        },
      };
    },
    async openReadSide() {
      // The write-api creates the primary file and its tables; until it has, say so once and retry.
      let told = '';
      for (;;) {
        let reason = `waiting for ${files.primary}: start the write-api first`;
        if (existsSync(files.primary)) {
          try {
            const store = openReadStore(config.dataDir);
            // One set of files: the replica is the primary, so REST reads see every acknowledged write.
            return { store, restReader: store, close: () => store.close() };
          } catch (error) {
            reason = `waiting for ${files.primary} to be initialised by the write-api (${(error as Error).message})`;
          }
        }
        if (reason !== told) say(reason);
        told = reason;
        await sleep(500);
      }
    },
    async openPrimaryLog(signal) {
      const primary = await openPrimaryWhenCreated(config.dataDir, say, signal);
      return { log: primary.log, problem: () => null, close: () => primary.close() };
    },
    async openProjections() {
      const dir = files.projectionsDir;
      let store = openProjectionStore({ dir, synchronous });
      // Wakes the projector when a rebuild promotes a generation (the log's own wait covers commits).
      const promotions = new ChangeSignal([join(dir, 'CURRENT')]);
      return {
        current: () => store,
        follow() {
          const current = currentGeneration(dir);
          // Never create a generation here: one CURRENT names but that does not exist is not ours to start.
          if (!current || current === store.generation || !existsSync(join(dir, current))) return undefined;
          const old = store;
          store = openProjectionStore({ dir, generation: current, synchronous });
          void old.close();
          return store;
        },
        promotions: () => promotions.version,
        promoted: (seen, timeoutMs, signal) => promotions.next(seen, timeoutMs, signal),
        describe: () => ({ store: 'sqlite', generation: store.generation }),
        async close() {
          promotions.close();
          await store.close();
        },
      };
    },
    async openRebuild(note) {
      const dir = files.projectionsDir;
      // One rebuild at a time: each removes the generations it does not know, including one another
      // rebuild is still writing. SQLite releases the lock when the process dies, so a killed rebuild
      // never blocks the next one.
      const lock = openDatabase(join(dir, 'rebuild.lock'), { busyTimeoutMs: 0 });
      try {
        lock.exec('BEGIN EXCLUSIVE');
      } catch {
        console.error(`another rebuild is running on ${dir}`);
        process.exit(3);
      }
      const primary = await openPrimaryWhenCreated(config.dataDir, note);
      const previous = currentGeneration(dir);
      const generation = newGenerationName();
      // Nobody reads the generation until it is promoted, so it is built without a journal on disk;
      // finish() puts it in WAL and syncs it once, before anyone is pointed at it. Later passes (writes
      // that landed meanwhile) go through the ordinary store finish() returns.
      const bulk = openBulkProjectionStore({ dir, generation, synchronous });
      let store: ProjectionStore = bulk;
      return {
        log: primary.log,
        store: bulk,
        unboundedCache: true,
        async afterFirstPass() {
          const started = performance.now();
          note('rebuild: all events applied; creating the indexes and syncing the new generation…');
          store = await bulk.finish();
          const seconds = ((performance.now() - started) / 1000).toFixed(1);
          note(`rebuild: the new generation is indexed and synced (${seconds} s)`);
          return store;
        },
        async promote() {
          promoteGeneration(dir, generation);
          return { generation, previous, removed: removeStaleGenerations(dir, previous ? [previous] : []) };
        },
        async close() {
          await store.close();
          await primary.close();
          lock.close();
        },
      };
    },
  };
}
