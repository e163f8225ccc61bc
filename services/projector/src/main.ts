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
    'EGGMESH_LOG',
    'EGGMESH_KAFKA_BROKERS',
    'EGGMESH_KAFKA_TOPIC',
  ],
});
// The composition root: the adapters EGGMESH_STORE names are built here and handed to the loop as ports.
const config = loadConfig();
const stop = new AbortController();
let running = false;

let say: (level: 'error' | 'warn' | 'info', message: string) => void = (_level, message) =>
  console.error(message);

interface Source {
  readonly log: EventLog;
  /** Why the log is not usable right now (shown by /ready), or null. */
  problem(): string | null;
  close(): Promise<void>;
}

interface Stores {
  readonly log: Source;
  readonly store: ProjectionStore;
  /** SQLite only: the generation file in use (a rebuild promotes a new one). */
  readonly sqlite?: SqliteProjectionStore;
  close(): Promise<void>;
}

/**
 * The event log, by EGGMESH_LOG × EGGMESH_STORE: the topic the relay feeds (kafka; then the primary is
 * not opened at all, docs/architecture.md "The event log on Kafka"), else the primary's own log:
 * MongoDB's collection (connecting in the background) or the SQLite file read-only, waiting until the
 * write-api made it. The adapters of the tier not chosen are never loaded.
 */
async function openLog(): Promise<Source> {
  if (config.log === 'kafka') {
    const { KafkaEventLog, kafkajsClient, projectorGroup } = await import('@eggmesh/log-kafka');
    const client = kafkajsClient({
      brokers: config.kafka.brokers,
      topic: config.kafka.topic,
      clientId: 'eggmesh-projector',
    });
    const log = new KafkaEventLog({
      client,
      groupId: projectorGroup(config.kafka.topic),
      bufferEntries: Math.max(20_000, 4 * config.projector.batchSize),
      onLog: (level, message) => say(level, message),
    });
    return {
      log,
      problem: () =>
        log.connected
          ? null
          : `the Kafka broker (${config.kafka.brokers.join(',')}) does not answer; retrying`,
      async close() {
        await log.close();
        await client.close();
      },
    };
  }
  if (config.store === 'mongodb') {
    const { connectingMongoEventLog } = await import('@eggmesh/store-mongodb');
    const { uri, dbName } = config.mongodb;
    // Connecting in the background: the projector answers /health at once and retries until MongoDB answers.
    const log = connectingMongoEventLog({ uri, dbName }, connectLog('projector', `MongoDB at ${uri}`));
    return { log, problem: () => null, close: () => log.close() };
  }
  const primary = await openPrimaryWhenCreated(config.dataDir, (m) => console.error(m), stop.signal);
  return { log: primary.log, problem: () => null, close: () => primary.close() };
}

/**
 * The projections: MongoDB's collections (connecting in the background: /ready 503, and the loop
 * retrying, until MongoDB answers), or the current SQLite generation.
 */
async function openStores(): Promise<Stores> {
  const log = await openLog();
  if (config.store === 'mongodb') {
    const { Connecting, ConnectingProjectionStore, openMongoProjectionStore } = await import(
      '@eggmesh/store-mongodb'
    );
    const { uri, dbName, writeConcern } = config.mongodb;
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
  const sqlite = openProjectionStore({
    dir: dataFiles(config.dataDir).projectionsDir,
    synchronous: config.sqliteSync,
  });
  return { log, store: sqlite, sqlite, close: () => log.close() };
}

const opened = await openStores();
let sqliteStore = opened.sqlite;
// SQLite: wakes the loop when a rebuild promotes a generation (the log's own wait covers commits).
const promotions = sqliteStore
  ? new ChangeSignal([join(dataFiles(config.dataDir).projectionsDir, 'CURRENT')])
  : undefined;
const projector = new Projector(opened.log.log, opened.store, config.projector.batchSize);
const app = buildApp({
  config,
  projector,
  running: () => running,
  logProblem: () => opened.log.problem(),
  logger: loggerOptions(config, 'projector'),
});
say = (level, message) => app.log[level](message);

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
      opened.log.log.waitBeyond(position, config.projector.idlePollMs, wake.signal),
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
    ? { store: 'mongodb', log: config.log, uri: config.mongodb.uri, db: config.mongodb.dbName }
    : {
        store: 'sqlite',
        log: config.log,
        generation: sqliteStore?.generation,
        position: await projector.store.checkpoint(),
      },
  'projector running',
);
