// `node perf/dist/idle.js`: what the whole stack costs while nobody calls it. Starts the stack the way
// `pnpm start` does (services/stack/dist/main.js, `--scaled` with --scaled), waits until it says it is
// up, lets it settle, then samples every process of the tree (the supervisor, the services, and on the
// scaled tier the servers) for CPU time (/proc utime + stime) and RSS, and prints one line per process
// and the totals beside the issue-10 targets: idle CPU under 0.5 % of a core, idle RSS under 300 MB.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseCommandLine } from '@eggmesh/service-kit';
import { withDescendants } from '../../infra/processes.mjs';
import { freePort, repoRoot } from './lib/env.js';
import { clockTicksPerSecond, cpuTicks } from './lib/proc.js';
import { rssMiB } from './scenarios/soak.js';

const flags = parseCommandLine({
  command: 'node perf/dist/idle.js',
  summary:
    'Starts the whole stack on an empty data dir (as `pnpm start`; --seed fills it), waits until it is up and settled, then\nmeasures the CPU and RSS of every process while nothing calls it. Targets: < 0.5 % of a core, < 300 MB.',
  options: {
    seconds: { type: 'string', value: 'N', description: 'how long to measure (default 60)' },
    settle: {
      type: 'string',
      value: 'N',
      description:
        'seconds to wait after "up" before measuring (default 30: start-up work goes on for ~25 s)',
    },
    scaled: {
      type: 'boolean',
      description: 'the scaled tier (pnpm start:scaled: MongoDB-wire server and Kafka)',
    },
    seed: {
      type: 'boolean',
      description:
        'once up, run `pnpm seed` and reads of every kind through the front door: idle with data in it',
    },
  },
  env: [],
});

/** A short name for a process: the script it runs (node) or its program. */
function label(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const script = argv.find((a) => /\.(m?js)$/.test(a) || a.endsWith('.java'));
    if (script) return script.replace(`${repoRoot}/`, '').replace(/^.*\/(infra|services)\//, '$1/');
    return argv[0] ?? String(pid);
  } catch {
    return String(pid);
  }
}

const seconds = Number(flags.seconds ?? 60);
const settle = Number(flags.settle ?? 30);
const dataDir = mkdtempSync(join(tmpdir(), 'eggmesh-idle-'));
const ports = {
  WRITE_API_PORT: await freePort(),
  READ_API_PORT: await freePort(),
  PROJECTOR_PORT: await freePort(),
  EDGE_PORT: await freePort(),
  RELAY_PORT: await freePort(),
  EGGMESH_DEV_MONGODB_PORT: await freePort(),
  EGGMESH_DEV_KAFKA_PORT: await freePort(),
};
const main = join(repoRoot, 'services/stack/dist/main.js');
/** The node flags `pnpm start` gives the supervisor: what its script in package.json puts before main.js. */
function supervisorNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const flagsText = /\bnode((?: --?[\w-]+(?:=\S+)?)*) services\/stack\/dist\/main\.js/.exec(
    pkg.scripts.start ?? '',
  )?.[1];
  if (flagsText === undefined)
    throw new Error("package.json's start script does not run services/stack/dist/main.js");
  return flagsText.split(' ').filter((flag) => flag !== '');
}
const stack: ChildProcess = spawn(
  process.execPath,
  [...supervisorNodeFlags(), main, ...(flags.scaled ? ['--scaled'] : [])],
  {
    env: {
      ...process.env,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      EGGMESH_DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
/** `pnpm seed` against the stack's write-api, then reads of every kind through the front door. */
async function seedAndRead(): Promise<void> {
  const seed = spawn(process.execPath, [join(repoRoot, 'services/stack/dist/seed.js')], {
    env: { ...process.env, WRITE_API_PORT: String(ports.WRITE_API_PORT) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seedOutput = '';
  seed.stdout?.on('data', (d) => {
    seedOutput += String(d);
  });
  seed.stderr?.on('data', (d) => {
    seedOutput += String(d);
  });
  const code = await new Promise((resolve) => seed.once('exit', resolve));
  if (code !== 0) throw new Error(`pnpm seed failed (${code}):\n${seedOutput}`);
  const edge = `http://127.0.0.1:${ports.EDGE_PORT}`;
  const graph = async (path: string, query: string) => {
    const response = await fetch(`${edge}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    const body = (await response.json()) as { errors?: unknown; data?: Record<string, unknown> };
    if (!response.ok || body.errors) throw new Error(`${path}: ${JSON.stringify(body)}`);
    return body.data ?? {};
  };
  const farms = (await graph('/farm/graph', '{ getAll { id name } }')).getAll as { id: string }[];
  for (const farm of farms.slice(0, 5)) {
    await graph('/farm/graph', `{ getById(id: "${farm.id}") { name coops { name hens { name } } } }`);
    await fetch(`${edge}/farm/api/${farm.id}`);
  }
  await graph('/container_inventory/graph', '{ getAll { current_eggs } }');
  await graph('/hen_productivity/graph', '{ getAll { eggs_week } }');
  await graph('/farm_output/graph', '{ getAll { eggs_week total_hens } }');
  console.log(
    `seeded: ${seedOutput.trim().split('\n').at(-1)}; read ${farms.length} farms and the projections`,
  );
}
let output = '';
stack.stdout?.on('data', (d) => {
  output += String(d);
});
stack.stderr?.on('data', (d) => {
  output += String(d);
});
try {
  const deadline = Date.now() + 180_000;
  while (!output.includes('eggmesh is up')) {
    if (stack.exitCode !== null || Date.now() > deadline)
      throw new Error(`the stack did not come up:\n${output}`);
    await sleep(200);
  }
  if (flags.seed) await seedAndRead();
  console.log(
    `stack up (${flags.scaled ? 'scaled' : 'embedded'} tier${flags.seed ? ', seeded' : ''}); settling ${settle} s, then measuring ${seconds} s`,
  );
  await sleep(settle * 1000);
  const pids = withDescendants(stack.pid as number);
  const before = pids.map(cpuTicks);
  await sleep(seconds * 1000);
  const after = pids.map(cpuTicks);
  const hz = clockTicksPerSecond();
  const rows = pids.map((pid, i) => {
    const cpuMs = (((after[i] ?? Number.NaN) - (before[i] ?? Number.NaN)) / hz) * 1000;
    return { pid, name: label(pid), cpuPercent: (cpuMs / (seconds * 1000)) * 100, rss: rssMiB(pid) };
  });
  const width = Math.max(...rows.map((r) => r.name.length));
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(width)}  pid ${String(r.pid).padStart(7)}  CPU ${r.cpuPercent.toFixed(2).padStart(6)} % of a core  RSS ${r.rss.toFixed(1).padStart(6)} MiB`,
    );
  }
  const node = rows.filter((r) => !r.name.includes('java') && !r.name.endsWith('.java'));
  const total = (rs: typeof rows, key: 'cpuPercent' | 'rss') => rs.reduce((sum, r) => sum + r[key], 0);
  const cpu = total(rows, 'cpuPercent');
  const rssAll = total(rows, 'rss');
  const rssMB = (total(node, 'rss') * 1024 * 1024) / 1e6;
  console.log(
    `total: CPU ${cpu.toFixed(2)} % of a core (target < 0.5 %: ${cpu < 0.5 ? 'met' : 'missed'}); ` +
      `RSS ${rssAll.toFixed(1)} MiB in ${rows.length} processes` +
      (node.length < rows.length
        ? `, of which eggmesh's own ${total(node, 'rss').toFixed(1)} MiB = ${rssMB.toFixed(0)} MB`
        : ` = ${rssMB.toFixed(0)} MB`) +
      ` (target < 300 MB: ${rssMB < 300 ? 'met' : 'missed'})`,
  );
} finally {
  stack.kill('SIGINT');
  await new Promise((resolve) => stack.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
