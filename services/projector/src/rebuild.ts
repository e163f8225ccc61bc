import { join } from 'node:path';
import {
  type CliOption,
  type CommandSpec,
  loadConfig,
  parseCommandLine,
  usageError,
} from '@eggmesh/service-kit';
import {
  currentGeneration,
  dataFiles,
  newGenerationName,
  openDatabase,
  openPrimaryWhenCreated,
  openProjectionStore,
  promoteGeneration,
  removeStaleGenerations,
} from '@eggmesh/store-sqlite';
import { Projector } from './projector.js';

const spec = {
  command: 'pnpm rebuild-projections',
  summary:
    'Rebuilds container_inventory, hen_productivity and farm_output from log position 0 into a new\ngeneration, then switches readers and the running projector to it. The old projections keep serving\nuntil then. One rebuild at a time (exit 3 if another is running).',
  options: {
    batch: { type: 'string', value: 'N', description: 'log entries applied per transaction (default 5000)' },
    json: { type: 'boolean', description: 'print the summary as one JSON line' },
    quiet: { type: 'boolean', description: 'no progress on stderr' },
  },
  env: ['EGGMESH_DATA_DIR', 'EGGMESH_SQLITE_SYNC'],
} as const satisfies CommandSpec<Readonly<Record<string, CliOption>>>;

const values = parseCommandLine(spec);
const config = loadConfig();
if (config.store !== 'sqlite') {
  // The MongoDB tier has no generation switch yet: its projections are rebuilt by dropping the
  // projection collections (and projector_meta) and letting the projector replay the log.
  console.error('rebuild-projections works on the embedded tier (EGGMESH_STORE=sqlite) only, for now');
  process.exit(2);
}
const batchSize = values.batch ? Number(values.batch) : 5000;
if (!Number.isInteger(batchSize) || batchSize < 1) usageError(spec, '--batch must be a whole number ≥ 1');
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
const store = openProjectionStore({
  dir,
  generation,
  synchronous: config.sqliteSync,
  deferCurrent: true,
  bulk: true,
});
const projector = new Projector(log.log, store, batchSize);

const started = performance.now();
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

// Catch up until a pass finds nothing new, then point everyone at the new generation.
let position = await projector.catchUp(progress);
store.finishDeferredCurrent();
store.finishBulk();
for (let more = await projector.catchUp(progress); more > position; more = await projector.catchUp(progress))
  position = more;
const seconds = (performance.now() - started) / 1000;
progress(position, Math.max(position, await log.log.head()), true);
promoteGeneration(dir, generation);
await store.close();
await log.close();
const removed = removeStaleGenerations(dir, previous ? [previous] : []);
lock.close();

const summary = {
  generation,
  previous,
  events: position,
  seconds: Number(seconds.toFixed(3)),
  eventsPerSecond: Math.round(position / Math.max(seconds, 1e-3)),
  removed,
};
if (values.json) console.log(JSON.stringify(summary));
else
  console.log(
    `rebuilt ${summary.events.toLocaleString('en')} events in ${summary.seconds} s (${summary.eventsPerSecond.toLocaleString('en')} events/s) into ${generation}`,
  );
