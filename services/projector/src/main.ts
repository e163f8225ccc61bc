import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { commonServiceEnv, loadConfig, loggerOptions, parseCommandLine, serve } from '@eggmesh/service-kit';
import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import { ChangeSignal, dataFiles, openProjectionStore } from '@eggmesh/store-sqlite';
import { buildApp } from './app.js';
import { openLogSource } from './open.js';
import { Projector } from './projector.js';

parseCommandLine({
  command: 'node services/projector/dist/main.js',
  summary:
    'Applies the event log to the projections (container inventory, hen productivity, farm output),\nexactly once in effect; serves /health and /metrics. `pnpm start` runs it under the supervisor.',
  env: [
    ...commonServiceEnv,
    'PROJECTOR_PORT',
    'EGGMESH_SQLITE_SYNC',
    'EGGMESH_PROJECTOR_BATCH',
    'EGGMESH_PROJECTOR_IDLE_POLL_MS',
  ],
});
const config = loadConfig();
const stop = new AbortController();
let running = false;

const log = await openLogSource(config.dataDir, (m) => console.error(m), stop.signal);
const files = dataFiles(config.dataDir);
const store = openProjectionStore({
  dir: files.projectionsDir,
  synchronous: config.sqliteSync,
});
// Wakes the loop when the write-api commits (the primary's files change) or a rebuild promotes a generation.
const changes = new ChangeSignal([files.primary, join(files.projectionsDir, 'CURRENT')]);
const projector = new Projector(log, store, config.projector.batchSize);
const app = buildApp({ projector, log, running: () => running, logger: loggerOptions(config, 'projector') });

/**
 * Applies batches as they appear. With nothing to do it sleeps until the primary's files change, or
 * idlePollMs at the latest (a safety net for file systems without change events).
 */
async function run(): Promise<void> {
  running = true;
  while (!stop.signal.aborted) {
    try {
      const seen = changes.version;
      if (projector.followCurrentGeneration()) {
        app.log.info({ generation: projector.store.generation }, 'switched to a rebuilt generation');
      }
      const result = projector.step();
      if (result.applied === 0) await changes.next(seen, config.projector.idlePollMs, stop.signal);
      else await new Promise((resolve) => setImmediate(resolve));
    } catch (error) {
      if (isStoreError(error, storeErrorCodes.CONFLICT)) {
        app.log.warn({ err: error }, 'another projector moved the checkpoint; continuing from it');
        continue;
      }
      app.log.error({ err: error }, 'batch failed; retrying in 1 s');
      await sleep(1000).catch(() => undefined);
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
    changes.close();
    await projector.store.close();
    await log.close();
  },
});
app.log.info(
  { generation: projector.store.generation, position: projector.store.checkpointSync() },
  'projector running',
);
