import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, loggerOptions, serve } from '@eggmesh/service-kit';
import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import {
  ChangeSignal,
  currentGeneration,
  dataFiles,
  openPrimaryWhenCreated,
  openProjectionStore,
  type SqliteProjectionStore,
} from '@eggmesh/store-sqlite';
import { buildApp } from './app.js';
import { Projector } from './projector.js';

// The composition root: the SQLite adapters are built here and handed to the loop as ports.
const config = loadConfig();
const stop = new AbortController();
let running = false;

const primary = await openPrimaryWhenCreated(config.dataDir, (m) => console.error(m), stop.signal);
const files = dataFiles(config.dataDir);
let store: SqliteProjectionStore = openProjectionStore({
  dir: files.projectionsDir,
  synchronous: config.sqliteSync,
});
// Wakes the loop when a rebuild promotes a generation (the log's own wait covers commits).
const promotions = new ChangeSignal([join(files.projectionsDir, 'CURRENT')]);
const projector = new Projector(primary.log, store, config.projector.batchSize);
const app = buildApp({ projector, running: () => running, logger: loggerOptions(config, 'projector') });

/** Switches to the generation CURRENT names, when a rebuild promoted a new one. */
function followCurrentGeneration(): void {
  const current = currentGeneration(store.dir);
  if (!current || current === store.generation) return;
  // Never create a generation here: one CURRENT names but that does not exist is not ours to start.
  if (!existsSync(join(store.dir, current))) return;
  const old = store;
  store = openProjectionStore({ dir: old.dir, generation: current, synchronous: config.sqliteSync });
  projector.useStore(store);
  void old.close();
  app.log.info({ generation: current }, 'switched to a rebuilt generation');
}

/** Sleeps until the log head passes `position` or a generation is promoted, idlePollMs at the latest. */
async function idle(position: number, seen: number): Promise<void> {
  const wake = new AbortController();
  const onStop = () => wake.abort();
  stop.signal.addEventListener('abort', onStop, { once: true });
  try {
    await Promise.race([
      primary.log.waitBeyond(position, config.projector.idlePollMs, wake.signal),
      promotions.next(seen, config.projector.idlePollMs, wake.signal),
    ]);
  } finally {
    wake.abort();
    stop.signal.removeEventListener('abort', onStop);
  }
}

async function run(): Promise<void> {
  running = true;
  while (!stop.signal.aborted) {
    try {
      const seen = promotions.version;
      followCurrentGeneration();
      const result = await projector.step();
      if (result.applied === 0) await idle(result.position, seen);
      else await new Promise((resolve) => setImmediate(resolve));
    } catch (error) {
      if (isStoreError(error, storeErrorCodes.CONFLICT)) {
        app.log.warn({ err: error }, 'another projector moved the checkpoint; continuing from it');
        continue;
      }
      app.log.error({ err: error }, 'batch failed; retrying in 1 s');
      await sleep(1000, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  }
  running = false;
}

const loop = run();
await serve(app, {
  port: config.ports.projector,
  config,
  onClose: async () => {
    stop.abort();
    await loop;
    promotions.close();
    await store.close();
    await primary.close();
  },
});
app.log.info({ generation: store.generation, position: await store.checkpoint() }, 'projector running');
