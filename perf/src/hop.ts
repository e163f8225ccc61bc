// `node perf/dist/hop.js`: what one process in front of the write-api costs a client at a low rate, the
// ruler for the front door's REST writes (issue 10). On a fresh data dir it starts the write-api, the
// edge in front of it, HAProxy (EGGMESH_FRONT_DOOR=haproxy) where installed, and a relay that passes bytes
// without reading them (hop-relay.js: the floor of a Node hop); with --edge-b, a second edge build
// beside the first. Then each of `--clients` users (one by default) sends a farm create, a REST get of
// it and an update of it (followed at once by its delete, not timed, as in the latency scenario) to
// every target in turn, `--gap-ms` apart (each request finds the processes idle, as a k6 user with
// think time does), the targets in a random order each round (perf/README.md, round 23), the users in
// step.
// Prints p50/p90/p95/mean per target and kind, and each p50 over the write-api's own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseCommandLine } from '@eggmesh/service-kit';
import { mulberry32, permutation } from './data/prng.js';
import { freePort, perfScript, repoRoot, shortCommit } from './lib/env.js';
import { check } from './lib/gate.js';
import { type Answer, Client } from './lib/http-client.js';
import { ChildService } from './lib/proc.js';
import { haproxyAvailable, Stack } from './lib/stack.js';
import { percentileOfSorted } from './lib/stats.js';
import { parse } from './scenarios/common.js';

const flags = parseCommandLine({
  command: 'node perf/dist/hop.js',
  summary:
    'What one hop in front of the write-api costs at a low rate: farm creates, gets and updates through the\nedge, HAProxy (where installed), a relay that only passes bytes (the floor of a Node hop) and the\nwrite-api itself, --clients users in step, --gap-ms apart, the targets in a random order each round.\nBuild first (pnpm build).',
  options: {
    requests: { type: 'string', value: 'N', description: 'timed rounds (default 300)' },
    clients: {
      type: 'string',
      value: 'N',
      description:
        'users in step, each on connections of its own (default 1; the latency scenario runs 1 and 10)',
    },
    'gap-ms': {
      type: 'string',
      value: 'MS',
      description: 'pause before each request (default 100: the processes are idle when it comes)',
    },
    keep: { type: 'boolean', description: 'keep the data dir and the service logs' },
    'edge-b': {
      type: 'string',
      value: 'PATH',
      description:
        'a second edge build (its server.js, inside the repository) measured beside the first: an A/B of the edge',
    },
  },
  env: [],
  otherEnv: [
    { name: 'BENCH_EDGE_ENTRY', default: 'the built edge', description: 'measure another edge build' },
    {
      name: 'BENCH_WRITE_API_ENTRY',
      default: 'the built write-api',
      description: 'measure another write-api build',
    },
    { name: 'BENCH_HAPROXY', default: 'on where installed', description: '0: leave HAProxy out' },
  ],
});

const rounds = Number(flags.requests ?? 300);
const gapMs = Number(flags['gap-ms'] ?? 100);
const users = Number(flags.clients ?? 1);
check(Number.isInteger(rounds) && rounds >= 20, '--requests must be an integer of at least 20');
check(Number.isFinite(gapMs) && gapMs >= 0, '--gap-ms must be a number ≥ 0');
check(Number.isInteger(users) && users >= 1, '--clients must be an integer of at least 1');

const WARM_ROUNDS = 20;
const kinds = ['create', 'get', 'update'] as const;
type Kind = (typeof kinds)[number];

const farmBody = (name: string) => JSON.stringify({ name, farm_type: 'megafarm', zone: 'hop', owner: 'hop' });

/** The answer's JSON object when it has `status` (and the farm `name`, when given); else exits 1. */
function checked(target: string, kind: string, answer: Answer, status: number, name?: string) {
  const doc = parse(answer.body);
  check(
    answer.status === status && doc !== undefined && (name === undefined || doc.name === name),
    `${target}: ${kind} answered ${answer.status} ${answer.body.slice(0, 200)}`,
  );
  return doc!;
}

const dir = mkdtempSync(join(tmpdir(), 'eggmesh-hop-'));
const stack = new Stack({
  dataDir: join(dir, 'data'),
  logDir: join(dir, 'logs'),
  bareDbFile: join(dir, 'bare.db'),
  dataset: { preset: 'none', seed: 0, anchorMs: 0 },
  extraEnv: { EGGMESH_LOG_LEVEL: 'warn' },
});
/** The processes this tool starts beside the stack's (the relay, a second edge). */
const children: ChildService[] = [];
/** Starts `entry` on a free port of its own, ready once /health answers; its base URL. */
async function startOwn(name: string, entry: string, env: (port: number) => Record<string, string>) {
  const port = await freePort();
  children.push(
    await ChildService.start({
      name,
      entry,
      env: env(port),
      cwd: repoRoot,
      logFile: join(dir, 'logs', `${name.replace(/\s+/g, '-')}.log`),
      healthUrl: `http://127.0.0.1:${port}/health`,
    }),
  );
  return `http://127.0.0.1:${port}`;
}
const clients: Client[] = [];
try {
  await stack.ensure(['write-api', 'edge', ...(haproxyAvailable ? (['haproxy'] as const) : [])]);
  // Its /health is passed through to the write-api's own.
  const relay = await startOwn('byte relay', perfScript('hop-relay.js'), (port) => ({
    HOP_RELAY_PORT: String(port),
    HOP_RELAY_TARGET_PORT: new URL(stack.url('write-api')).port,
  }));
  const edgeBEntry = flags['edge-b'];
  // As the stack starts the edge, on a port of its own (GraphQL embedded: it listens on no other).
  const edgeB =
    edgeBEntry === undefined
      ? undefined
      : await startOwn('edge B', edgeBEntry, (port) => ({
          EGGMESH_HOST: '127.0.0.1',
          EGGMESH_DATA_DIR: join(dir, 'data'),
          EDGE_PORT: String(port),
          EGGMESH_WRITE_API_URL: stack.url('write-api'),
          EGGMESH_READ_API_URL: stack.url('edge'),
          EGGMESH_LOG_LEVEL: 'warn',
        }));
  const targets = [
    { name: 'write-api', base: stack.url('write-api') },
    { name: 'edge', base: stack.url('edge') },
    ...(edgeB ? [{ name: 'edge B', base: edgeB }] : []),
    ...(haproxyAvailable ? [{ name: 'haproxy', base: stack.url('haproxy') }] : []),
    { name: 'byte relay', base: relay },
  ];
  const samples = new Map(
    targets.map((t) => [
      t.name,
      Object.fromEntries(kinds.map((k) => [k, [] as number[]])) as Record<Kind, number[]>,
    ]),
  );
  process.stderr.write(
    `hop: ${rounds} rounds (+${WARM_ROUNDS} not counted), ${users} user(s), ${gapMs} ms before each request, targets: ${targets.map((t) => t.name).join(', ')}\n`,
  );
  /** One user: a connection of its own to each target, visited in a random order each round. */
  const run = async (user: number) => {
    const own = targets.map(() => new Client());
    const rng = mulberry32(user + 1);
    clients.push(...own);
    for (let round = 0; round < WARM_ROUNDS + rounds; round++) {
      for (const at of permutation(rng, targets.length)) {
        const target = targets[at]!;
        const client = own[at]!;
        const name = `hop ${user}.${round}`;
        await sleep(gapMs);
        const created = await client.send(`${target.base}/farm/api`, 'POST', farmBody(name));
        const id = checked(target.name, 'create', created, 201, name).id;
        check(typeof id === 'string', `${target.name}: create answered no id: ${created.body.slice(0, 200)}`);
        const url = `${target.base}/farm/api/${id}`;
        await sleep(gapMs);
        const read = await client.send(url, 'GET');
        checked(target.name, 'get', read, 200, name);
        await sleep(gapMs);
        const put = await client.send(url, 'PUT', farmBody(`${name}-v2`));
        checked(target.name, 'update', put, 200, `${name}-v2`);
        checked(target.name, 'delete', await client.send(url, 'DELETE'), 200);
        if (round >= WARM_ROUNDS) {
          const mine = samples.get(target.name)!;
          mine.create.push(created.ms);
          mine.get.push(read.ms);
          mine.update.push(put.ms);
        }
      }
      if (user === 0 && (round + 1) % 50 === 0)
        process.stderr.write(`  ${round + 1} / ${WARM_ROUNDS + rounds}\n`);
    }
  };
  await Promise.all(Array.from({ length: users }, (_, user) => run(user)));
  const p50Of = (values: number[]) => percentileOfSorted(values, 50);
  const direct = samples.get('write-api')!;
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  console.log(
    `\n${shortCommit()}, ${rounds} rounds of ${users} user(s), ${gapMs} ms apart; ms (p50 over the write-api's p50: what the hop adds)\n`,
  );
  console.log('| kind | target | p50 | p90 | p95 | mean | p50 − write-api |');
  console.log('|---|---|--:|--:|--:|--:|--:|');
  for (const kind of kinds) {
    const base = p50Of(sorted(direct[kind]));
    for (const target of targets) {
      const values = sorted(samples.get(target.name)![kind]);
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      const p50 = p50Of(values);
      const cells = [p50, percentileOfSorted(values, 90), percentileOfSorted(values, 95), mean];
      const extra =
        target.name === 'write-api' ? '' : `${p50 - base >= 0 ? '+' : ''}${(p50 - base).toFixed(3)}`;
      console.log(`| ${kind} | ${target.name} | ${cells.map((v) => v.toFixed(3)).join(' | ')} | ${extra} |`);
    }
  }
} finally {
  for (const client of clients) client.close();
  for (const child of children) await child.stop();
  await stack.stopAll();
  if (flags.keep) process.stderr.write(`kept ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}
