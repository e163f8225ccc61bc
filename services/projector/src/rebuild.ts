import { openBackend } from '@eggmesh/backends';
import {
  type CliOption,
  type CommandSpec,
  loadConfig,
  parseCommandLine,
  usageError,
} from '@eggmesh/service-kit';
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
  config: 'rebuild',
} as const satisfies CommandSpec<Readonly<Record<string, CliOption>>>;

const values = parseCommandLine(spec);
const config = loadConfig('rebuild');
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
 * Replays the whole log through the ports (the same Projector as the service) into the backend's rebuild
 * target, then makes it live. SQLite: a new generation, the old one serving until the switch; MongoDB: in
 * place, the checkpoint reset (docs/architecture.md).
 */
async function rebuild(): Promise<ReturnType<typeof summarize>> {
  const backend = await openBackend(config, 'rebuild', note);
  const target = await backend.openRebuild(note);
  try {
    // Where the target holds everything in memory while folding, so does the projector's cache, so that
    // no batch waits for a load of what an earlier one wrote.
    const projector = new Projector(
      target.log,
      target.store,
      batchSize,
      target.unboundedCache ? Number.POSITIVE_INFINITY : undefined,
    );
    started = performance.now();
    const position = await catchUpAll(projector, async () => {
      if (target.afterFirstPass) projector.useStore(await target.afterFirstPass());
    });
    // Done at `position`: writes that land after the last pass are the running projector's to apply.
    progress(position, position, true);
    const { generation, previous, removed } = await target.promote();
    return summarize(position, generation, previous, removed);
  } finally {
    await target.close();
  }
}

const summary = await rebuild();
if (values.json) console.log(JSON.stringify(summary));
else
  console.log(
    `rebuilt ${summary.events.toLocaleString('en')} events in ${summary.seconds} s (${summary.eventsPerSecond.toLocaleString('en')} events/s, peak RSS ${summary.peakRssMiB.toLocaleString('en')} MiB) ${summary.generation ? `into ${summary.generation}` : `in place on MongoDB (${config.mongodb.projections.dbName})`}`,
  );
