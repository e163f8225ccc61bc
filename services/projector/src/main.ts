import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KafkaEventLog, kafkajsClient, projectorGroup } from '@eggmesh/log-kafka';
import { loadConfig, loggerOptions, serve } from '@eggmesh/service-kit';
import { type EventLog, isStoreError, storeErrorCodes } from '@eggmesh/store';
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

let say: (level: 'error' | 'warn' | 'info', message: string) => void = (_level, message) =>
  console.error(message);

/**
 * The event log: the primary's own (SQLite, read-only), or with EGGMESH_LOG=kafka the topic the relay
 * feeds (docs/architecture.md, "The event log on Kafka"); then the primary is not opened at all.
 */
async function openLog(): Promise<{ log: EventLog; problem: () => string | null; close(): Promise<void> }> {
  if (config.log === 'kafka') {
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
  const primary = await openPrimaryWhenCreated(config.dataDir, (m) => console.error(m), stop.signal);
  return { log: primary.log, problem: () => null, close: () => primary.close() };
}

const source = await openLog();
const files = dataFiles(config.dataDir);
let store: SqliteProjectionStore = openProjectionStore({
  dir: files.projectionsDir,
  synchronous: config.sqliteSync,
});
// Wakes the loop when a rebuild promotes a generation (the log's own wait covers commits).
const promotions = new ChangeSignal([join(files.projectionsDir, 'CURRENT')]);
const projector = new Projector(source.log, store, config.projector.batchSize);
const app = buildApp({
  projector,
  running: () => running,
  logProblem: source.problem,
  logger: loggerOptions(config, 'projector'),
});
say = (level, message) => app.log[level](message);

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
      source.log.waitBeyond(position, config.projector.idlePollMs, wake.signal),
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
    await source.close();
  },
});
app.log.info({ generation: store.generation, position: await store.checkpoint() }, 'projector running');
