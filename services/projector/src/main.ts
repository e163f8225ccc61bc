import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  commonServiceEnv,
  connectLog,
  loadConfig,
  loggerOptions,
  parseCommandLine,
  serve,
} from '@eggmesh/service-kit';
import { type EventLog, isStoreError, type ProjectionStore, storeErrorCodes } from '@eggmesh/store';
import {
  Connecting,
  ConnectingEventLog,
  ConnectingProjectionStore,
  openMongoEventLog,
  openMongoProjectionStore,
} from '@eggmesh/store-mongodb';
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
// The composition root: the adapters EGGMESH_STORE names are built here and handed to the loop as ports.
const config = loadConfig();
const stop = new AbortController();
let running = false;

interface Stores {
  readonly log: EventLog;
  readonly store: ProjectionStore;
  /** SQLite only: the generation file in use (a rebuild promotes a new one). */
  readonly sqlite?: SqliteProjectionStore;
  close(): Promise<void>;
}

/**
 * SQLite: the primary file read-only (waiting until the write-api made it) and the current projection
 * generation. MongoDB: the database's log and projection collections, connecting in the background
 * (/ready 503, and the loop retrying, until MongoDB answers).
 */
async function openStores(): Promise<Stores> {
  if (config.store === 'mongodb') {
    const { uri, dbName, writeConcern } = config.mongodb;
    const log = new ConnectingEventLog(
      new Connecting(
        () => openMongoEventLog({ uri, dbName, serverSelectionTimeoutMS: 5000 }),
        connectLog('projector', `MongoDB at ${uri}`),
      ),
    );
    const store = new ConnectingProjectionStore(
      new Connecting(() =>
        openMongoProjectionStore({ uri, dbName, writeConcern, serverSelectionTimeoutMS: 5000 }),
      ),
    );
    return {
      log,
      store,
      close: async () => {
        await store.close();
        await log.close();
      },
    };
  }
  const primary = await openPrimaryWhenCreated(config.dataDir, (m) => console.error(m), stop.signal);
  const sqlite = openProjectionStore({
    dir: dataFiles(config.dataDir).projectionsDir,
    synchronous: config.sqliteSync,
  });
  return { log: primary.log, store: sqlite, sqlite, close: () => primary.close() };
}

const opened = await openStores();
let sqliteStore = opened.sqlite;
// SQLite: wakes the loop when a rebuild promotes a generation (the log's own wait covers commits).
const promotions = sqliteStore
  ? new ChangeSignal([join(dataFiles(config.dataDir).projectionsDir, 'CURRENT')])
  : undefined;
const projector = new Projector(opened.log, opened.store, config.projector.batchSize);
const app = buildApp({ projector, running: () => running, logger: loggerOptions(config, 'projector') });

/** Switches to the generation CURRENT names, when a rebuild promoted a new one (SQLite). */
function followCurrentGeneration(): void {
  if (!sqliteStore) return;
  const current = currentGeneration(sqliteStore.dir);
  if (!current || current === sqliteStore.generation) return;
  // Never create a generation here: one CURRENT names but that does not exist is not ours to start.
  if (!existsSync(join(sqliteStore.dir, current))) return;
  const old = sqliteStore;
  sqliteStore = openProjectionStore({ dir: old.dir, generation: current, synchronous: config.sqliteSync });
  projector.useStore(sqliteStore);
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
      opened.log.waitBeyond(position, config.projector.idlePollMs, wake.signal),
      ...(promotions ? [promotions.next(seen, config.projector.idlePollMs, wake.signal)] : []),
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
      const seen = promotions?.version ?? 0;
      followCurrentGeneration();
      const result = await projector.step();
      if (result.applied === 0) await idle(result.position, seen);
      else await new Promise((resolve) => setImmediate(resolve));
    } catch (error) {
      if (isStoreError(error, storeErrorCodes.CONFLICT)) {
        app.log.warn({ err: error }, 'another projector moved the checkpoint; continuing from it');
        continue;
      }
      if (isStoreError(error, storeErrorCodes.UNAVAILABLE)) {
        app.log.warn({ reason: error.message }, 'storage unreachable; retrying in 1 s');
      } else {
        app.log.error({ err: error }, 'batch failed; retrying in 1 s');
      }
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
    promotions?.close();
    await sqliteStore?.close();
    await opened.close();
  },
});
app.log.info(
  config.store === 'mongodb'
    ? { store: 'mongodb', uri: config.mongodb.uri, db: config.mongodb.dbName }
    : { store: 'sqlite', generation: sqliteStore?.generation, position: await projector.store.checkpoint() },
  'projector running',
);
