import { join } from 'node:path';
import {
  type CliOption,
  type CommandSpec,
  loadConfig,
  parseCommandLine,
  usageError,
} from '@eggmesh/service-kit';
import type { ProjectionStore } from '@eggmesh/store';
import {
  currentGeneration,
  dataFiles,
  newGenerationName,
  openBulkProjectionStore,
  openDatabase,
  openPrimaryWhenCreated,
  promoteGeneration,
  removeStaleGenerations,
} from '@eggmesh/store-sqlite';
import { Projector } from './projector.js';

const spec = {
  command: 'pnpm rebuild-projections',
  summary:
    'Rebuilds container_inventory, hen_productivity and farm_output from log position 0. SQLite: into a\nnew generation, then switches readers and the running projector to it; the old projections keep\nserving until then; one rebuild at a time (exit 3 if another is running). MongoDB: in place, with\nthe checkpoint reset to 0 (readers see the projections catch up; see docs/architecture.md).',
  options: {
    batch: { type: 'string', value: 'N', description: 'log entries applied per transaction (default 5000)' },
    json: { type: 'boolean', description: 'print the summary as one JSON line' },
    quiet: { type: 'boolean', description: 'no progress on stderr' },
  },
  env: [
    'EGGMESH_STORE',
    'EGGMESH_DATA_DIR',
    'EGGMESH_SQLITE_SYNC',
    'EGGMESH_MONGODB_URI',
    'EGGMESH_MONGODB_DB',
  ],
} as const satisfies CommandSpec<Readonly<Record<string, CliOption>>>;

const values = parseCommandLine(spec);
const config = loadConfig();
const batchSize = values.batch ? Number(values.batch) : 5000;
if (!Number.isInteger(batchSize) || batchSize < 1) usageError(spec, '--batch must be a whole number ≥ 1');
let started = performance.now();
const tty = process.stderr.isTTY && !values.quiet;
let lastPrint = 0;
let lastNonTty = 0;
const progress = (position: number, head: number, final = false) => {
  if (values.quiet) return;
  const now = performance.now();
  if (!final && now - lastPrint < 200) return;
  lastPrint = now;
  const seconds = (now - started) / 1000;
  const pct = head === 0 ? 100 : Math.floor((position / head) * 100);
  const width = 30;
  const bar = '#'.repeat(Math.round((pct / 100) * width)).padEnd(width, '.');
  const rate = Math.round(position / Math.max(seconds, 1e-3));
  const line = `rebuild [${bar}] ${pct}% ${position.toLocaleString('en')}/${head.toLocaleString('en')} events  ${rate.toLocaleString('en')} events/s`;
  if (tty) process.stderr.write(`\r${line}${final ? '\n' : ''}`);
  else if (final || now - lastNonTty > 2000) {
    lastNonTty = now;
    process.stderr.write(`${line}\n`);
  }
};

/** A line on stderr between progress bars (none with --quiet). */
const note = (line: string) => {
  if (values.quiet) return;
  process.stderr.write(`${tty ? '\n' : ''}${line}\n`);
};

/** Catches up until a pass finds nothing new (writes may land during the rebuild); the last position. */
async function catchUpAll(projector: Projector, afterFirst?: () => Promise<void>): Promise<number> {
  let position = await projector.catchUp(progress);
  await afterFirst?.();
  for (
    let more = await projector.catchUp(progress);
    more > position;
    more = await projector.catchUp(progress)
  )
    position = more;
  return position;
}

const summarize = (
  events: number,
  generation: string | null,
  previous: string | null,
  removed: readonly string[],
) => {
  const seconds = (performance.now() - started) / 1000;
  return {
    generation,
    previous,
    events,
    seconds: Number(seconds.toFixed(3)),
    eventsPerSecond: Math.round(events / Math.max(seconds, 1e-3)),
    /** The process's peak resident memory (every thread), MiB. */
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    removed,
  };
};

/**
 * MongoDB: in place. The projection collections and the checkpoint are dropped, then the log is
 * replayed from position 0 through the ports (the same Projector as the service). A projector service
 * still running meanwhile cooperates through the checkpoint compare-and-set: its next commit conflicts,
 * it forgets its cache and carries on from the rebuilt checkpoint.
 */
async function rebuildOnMongo(): Promise<ReturnType<typeof summarize>> {
  const { openMongoEventLog, openMongoProjectionStore } = await import('@eggmesh/store-mongodb');
  const { uri, dbName, writeConcern } = config.mongodb;
  const log = await openMongoEventLog({ uri, dbName, serverSelectionTimeoutMS: 10_000 });
  const store = await openMongoProjectionStore({ uri, dbName, writeConcern, reset: true });
  try {
    const projector = new Projector(log, store, batchSize);
    started = performance.now();
    const position = await catchUpAll(projector);
    progress(position, position, true);
    return summarize(position, null, null, []);
  } finally {
    await store.close();
    await log.close();
  }
}

async function rebuildOnSqlite(): Promise<ReturnType<typeof summarize>> {
  const dir = dataFiles(config.dataDir).projectionsDir;
  // One rebuild at a time: each removes the generations it does not know, including one another rebuild
  // is still writing. The SQLite write lock is released when the process dies, so a killed rebuild never
  // blocks the next one.
  const lock = openDatabase(join(dir, 'rebuild.lock'), { busyTimeoutMs: 0 });
  try {
    lock.exec('BEGIN EXCLUSIVE');
  } catch {
    console.error(`another rebuild is running on ${dir}`);
    process.exit(3);
  }
  const log = await openPrimaryWhenCreated(config.dataDir, (m) => console.error(m));
  const previous = currentGeneration(dir);
  const generation = newGenerationName();
  // Bulk: nobody reads the generation until it is promoted, so it is built without a journal on disk;
  // finish() puts it in WAL and fsyncs it once, before anyone is pointed at it. Later passes (writes
  // that landed meanwhile) go through the ordinary store finish() returns.
  const bulk = openBulkProjectionStore({ dir, generation, synchronous: config.sqliteSync });
  let store: ProjectionStore = bulk;
  // The bulk store keeps every document and state row in memory; so does this cache, decoded, so
  // that no batch waits for a load of what an earlier one wrote.
  const projector = new Projector(log.log, bulk, batchSize, Number.POSITIVE_INFINITY);
  started = performance.now();
  let position: number;
  try {
    position = await catchUpAll(projector, async () => {
      // Creating the indexes takes a few seconds on medium, about 15 on national: say so.
      const finishing = performance.now();
      note('rebuild: all events applied; creating the indexes and syncing the new generation…');
      store = await bulk.finish();
      note(
        `rebuild: the new generation is indexed and synced (${((performance.now() - finishing) / 1000).toFixed(1)} s)`,
      );
      projector.useStore(store);
    });
    // Done at `position`: writes that land after the last pass are the running projector's to apply.
    progress(position, position, true);
    promoteGeneration(dir, generation);
  } finally {
    await store.close();
    await log.close();
  }
  const removed = removeStaleGenerations(dir, previous ? [previous] : []);
  lock.close();
  return summarize(position, generation, previous, removed);
}

const summary = config.store === 'mongodb' ? await rebuildOnMongo() : await rebuildOnSqlite();
if (values.json) console.log(JSON.stringify(summary));
else
  console.log(
    `rebuilt ${summary.events.toLocaleString('en')} events in ${summary.seconds} s (${summary.eventsPerSecond.toLocaleString('en')} events/s, peak RSS ${summary.peakRssMiB.toLocaleString('en')} MiB) ${summary.generation ? `into ${summary.generation}` : `in place on MongoDB (${config.mongodb.dbName})`}`,
  );
