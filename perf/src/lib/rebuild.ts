import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { repoRoot } from './env.js';
import { clockTicksPerSecond, cpuTicks, tail } from './proc.js';
import { cpuProfArgs } from './stack.js';

/** The projector's offline rebuild (`pnpm rebuild-projections`). */
export const rebuildEntry = join(repoRoot, 'services/projector/dist/rebuild.js');

/**
 * The node flags `pnpm rebuild-projections` runs the rebuild with (the root package.json's script,
 * `node <flags> services/projector/dist/rebuild.js`), so the bench times the rebuild as users run it.
 */
export function rebuildNodeFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = (scripts['rebuild-projections'] ?? '').split(/\s+/);
  const entry = words.indexOf(relative(repoRoot, rebuildEntry));
  if (words[0] !== 'node' || entry < 0)
    throw new Error('the rebuild-projections script is not `node <flags> <rebuild.js>`');
  return words.slice(1, entry);
}

/** What `rebuild.js --json` prints on its last line. */
export interface RebuildSummary {
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  /** The rebuild process's peak RSS, MiB (absent when rebuild.js does not report it). */
  readonly peakRssMiB?: number;
}

/**
 * Projector rebuild throughput on one dataset: the summary (`events` applied from position
 * 0, `seconds` from opening the log to promoting the new generation), and what the bench saw around it.
 */
export interface RebuildFigures extends RebuildSummary {
  readonly preset: string;
  /** Spawn to exit, process start-up and shutdown included. */
  readonly wallSeconds: number;
  /** utime + stime of the rebuild process, ms (sampled every 100 ms until it exits); absent when unknown. */
  readonly cpuMs?: number;
}

/** Parses the JSON summary `rebuild.js --json` prints (its last JSON line). */
export function parseRebuildOutput(stdout: string): RebuildSummary {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.trimStart().startsWith('{'));
  if (!line) throw new Error(`rebuild printed no JSON summary: ${stdout.slice(-300)}`);
  const parsed = JSON.parse(line) as Partial<RebuildSummary>;
  const { events, seconds, eventsPerSecond, peakRssMiB } = parsed;
  if (typeof events !== 'number' || typeof seconds !== 'number' || typeof eventsPerSecond !== 'number') {
    throw new Error(`rebuild summary lacks events/seconds/eventsPerSecond: ${line}`);
  }
  return { events, seconds, eventsPerSecond, ...(typeof peakRssMiB === 'number' ? { peakRssMiB } : {}) };
}

/**
 * Runs `node <the script's flags> services/projector/dist/rebuild.js --json --quiet` on `dataDir` (EGGMESH_DATA_DIR) and
 * returns its throughput. stderr goes to `logFile`. With `cpuProfileDir`, a V8 CPU profile of the
 * rebuild is written there.
 */
export async function runRebuild(options: {
  readonly preset: string;
  readonly dataDir: string;
  readonly logFile: string;
  readonly cpuProfileDir?: string | undefined;
}): Promise<RebuildFigures> {
  mkdirSync(dirname(options.logFile), { recursive: true });
  const fd = openSync(options.logFile, 'a');
  const started = performance.now();
  let stdout = '';
  let code: number | null;
  let ticks = Number.NaN;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const child = spawn(
      process.execPath,
      [...rebuildNodeFlags(), ...cpuProfArgs(options.cpuProfileDir), rebuildEntry, '--json', '--quiet'],
      {
        cwd: repoRoot,
        env: { ...process.env, EGGMESH_DATA_DIR: options.dataDir, EGGMESH_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', fd],
      },
    );
    const pid = child.pid;
    if (pid !== undefined) {
      sampler = setInterval(() => {
        const t = cpuTicks(pid);
        if (Number.isFinite(t)) ticks = t;
      }, 100);
    }
    const out = child.stdout;
    if (!out) throw new Error('rebuild: no stdout pipe');
    out.setEncoding('utf8');
    out.on('data', (chunk: string) => {
      stdout += chunk;
    });
    code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, signal) => resolve(c ?? (signal ? -1 : null)));
    });
  } finally {
    if (sampler) clearInterval(sampler);
    closeSync(fd);
  }
  const wallSeconds = (performance.now() - started) / 1000;
  if (code !== 0) {
    throw new Error(`rebuild on ${options.dataDir} exited with ${code}:\n${tail(options.logFile)}`);
  }
  const summary = parseRebuildOutput(stdout);
  return {
    preset: options.preset,
    ...summary,
    wallSeconds,
    ...(Number.isFinite(ticks) ? { cpuMs: (ticks * 1000) / clockTicksPerSecond() } : {}),
  };
}
