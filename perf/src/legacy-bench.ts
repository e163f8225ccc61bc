// `pnpm bench:legacy`: what the legacy pipeline costs the clean API, in one run on one machine. Runs
// `pnpm start:legacy` on free ports, fills the SAP tables, then alternates a MeshQL-style mixed load
// on the public port (GraphQL reads with nesting and projections, REST reads, REST writes) with the
// pipeline idle and with the SAP generator streaming at --rate changes per second. Reports p50/p95/p99
// of both and their ratio (streaming ÷ idle), the CDC lag from a legacy commit to the clean read, and
// the legacy changes per second the layer drains in a burst. perf/README.md says how to read it.
import { parseArgs } from 'node:util';
import { legacyId, SapSimulator, sapCleanView, sapLegacyView, viewDifferences } from '@eggmesh/legacy-sync';
import pg from 'pg';
import { startLegacyStack } from './lib/legacy-stack.js';
import { runLoad, type Step } from './lib/load.js';
import { median as medianOf, percentileOfSorted } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '20' },
    duration: { type: 'string', default: '20' },
    runs: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    burst: { type: 'string', default: '2000' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(
    [
      'usage: pnpm bench:legacy [--rate N] [--duration S] [--runs N] [--warmup S] [--connections N] [--burst N]',
      '',
      'Mixed load on the clean API with the legacy pipeline idle, then with the SAP generator making --rate',
      'changes per second (default 20), alternated --runs times (default 3) for --duration seconds each',
      '(default 20) at --connections clients (default 10), after an unmeasured --warmup load (default 10 s);',
      'the CDC lag (legacy commit → clean read) while streaming; then --burst changes (default 2000) written as fast as PostgreSQL takes them, and the',
      'rate at which the layer drains them.',
      '',
    ].join('\n'),
  );
  process.exit(0);
}
const rate = Number(values.rate);
const duration = Number(values.duration);
const runs = Number(values.runs);
const warmup = Number(values.warmup);
const connections = Number(values.connections);
const burst = Number(values.burst);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
/** The p-th percentile (0..1) of the samples, nearest rank. */
const pct = (samples: number[], p: number) =>
  percentileOfSorted(
    [...samples].sort((a, b) => a - b),
    p * 100,
  );
const ms = (value: number) => `${value.toFixed(1)} ms`;

const stack = await startLegacyStack();
// Whatever fails below, the stack this started goes too.
process.on('uncaughtException', (error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  void stack.stop(true).then(() => process.exit(1));
});
process.on('unhandledRejection', (error) => {
  process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
  void stack.stop(true).then(() => process.exit(1));
});
const db = new pg.Client({ connectionString: stack.databaseUrl });
await db.connect();
const simulator = new SapSimulator(db, { seed: 1, unknownCodeRate: 0 });
await simulator.fill({ farms: 3, coopsPerFarm: 2, hensPerCoop: 5, containers: 4, consumers: 3 });
// The lag probe renames a plant of its own: the generator changes only the plants it made.
const probePlant = '9999';
await db.query(
  `INSERT INTO sap.zfarm_mstr VALUES ('100', $1, '1000', 'Probe', 'L', 'NORTH', NULL, 'PROBE', '20250301', '081500', NULL, NULL, NULL)`,
  [probePlant],
);

/**
 * Waits until the clean API holds the legacy tables' records and values; answers the milliseconds it
 * took. The load's own lay reports (UUIDv7 ids, not UUIDv5 legacy ids) are clean-only records: they
 * are left out, and so are the eggs laid and hen productivity they change.
 */
async function drained(timeoutMs = 900_000): Promise<number> {
  const begun = Date.now();
  const want = await sapLegacyView(db);
  const legacyIds = /^[0-9a-f]{8}-[0-9a-f]{4}-5/;
  for (;;) {
    const clean = await sapCleanView(stack.urls.public);
    const ids = Object.fromEntries(
      Object.entries(clean.ids).map(([entity, list]) => [entity, list.filter((id) => legacyIds.test(id))]),
    );
    const diff = viewDifferences(want, { ...clean, ids }).filter(
      (line) => !line.startsWith('eggs laid') && !line.startsWith('hen_productivity'),
    );
    if (diff.length === 0) return Date.now() - begun;
    if (Date.now() - begun > timeoutMs) throw new Error(`not drained: ${diff.join('; ')}`);
    await sleep(250);
  }
}
await drained();
const clean = await sapCleanView(stack.urls.public);
const farms = clean.ids.farm ?? [];
const hens = (await (await fetch(`${stack.urls.public}/hen/api?limit=10000`)).json()) as {
  id: string;
  coop_id: string;
}[];
const coops = (await (await fetch(`${stack.urls.public}/coop/api?limit=10000`)).json()) as {
  id: string;
  farm_id: string;
}[];
const containers = clean.ids.container ?? [];
const farmOf = new Map(coops.map((coop) => [coop.id, coop.farm_id]));
let n = 0;
const pick = <T>(list: readonly T[]) => list[n++ % list.length]!;
const gql = (entity: string, query: () => string): Step => ({
  method: 'POST',
  path: `/${entity}/graph`,
  body: JSON.stringify({ query: query() }),
  setup: (request) => ({ ...request, body: JSON.stringify({ query: query() }) }),
  check: (status, body) =>
    status === 200 && !body.includes('"errors"') ? undefined : `HTTP ${status}: ${body.slice(0, 200)}`,
});
// MeshQL's mixed workload: nested reads, projection reads, a REST read and a write, in one loop.
const steps: Step[] = [
  gql(
    'farm',
    () =>
      `{ getById(id: "${pick(farms)}") { name coops { name hens { name productivity { total_eggs } } } farmOutput { total_hens } } }`,
  ),
  gql('hen_productivity', () => `{ getByHen(id: "${pick(hens).id}") { total_eggs quality_rate } }`),
  gql(
    'container_inventory',
    () => `{ getByContainer(id: "${pick(containers)}") { current_eggs total_deposits } }`,
  ),
  {
    method: 'GET',
    path: `/hen/api/${hens[0]!.id}`,
    setup: (request) => ({ ...request, path: `/hen/api/${pick(hens).id}` }),
  },
  {
    method: 'POST',
    path: '/lay_report/api',
    setup: (request) => {
      const hen = pick(hens);
      return {
        ...request,
        body: JSON.stringify({
          hen_id: hen.id,
          coop_id: hen.coop_id,
          farm_id: farmOf.get(hen.coop_id),
          eggs: 3,
          timestamp: new Date().toISOString(),
        }),
      };
    },
    check: (status) => (status === 201 ? undefined : `HTTP ${status}`),
  },
];

/** The generator at `rate` until stopped; plus a probe that renames a farm each second and times when the clean API shows it. */
function stream(): { stop: () => Promise<{ changes: number; lags: number[] }> } {
  let on = true;
  let changes = 0;
  const lags: number[] = [];
  const writer = (async () => {
    const begun = Date.now();
    while (on) {
      await simulator.step();
      changes++;
      const wait = begun + (changes * 1000) / rate - Date.now();
      if (wait > 0) await sleep(wait);
    }
  })();
  const probe = (async () => {
    const farm = legacyId('sap', '100', 'zfarm_mstr', [probePlant]);
    for (let i = 0; on; i++) {
      const name = `Probe ${Date.now()}-${i}`;
      await db.query(`UPDATE sap.zfarm_mstr SET farm_nm = $1 WHERE mandt = '100' AND werks = $2`, [
        name,
        probePlant,
      ]);
      const committed = performance.now();
      for (;;) {
        const body = (await (await fetch(`${stack.urls.public}/farm/api/${farm}`)).json()) as {
          name?: string;
        };
        if (body.name === name) break;
        await sleep(20);
      }
      lags.push(performance.now() - committed);
      await sleep(1000);
    }
  })();
  return {
    stop: async () => {
      on = false;
      await Promise.all([writer, probe]);
      return { changes, lags };
    },
  };
}

const idle: { p50: number; p95: number; p99: number; rps: number }[] = [];
const streaming: typeof idle = [];
const lags: number[] = [];
let streamed = 0;
let streamedSeconds = 0;
// An unmeasured load first: the first measured mode would otherwise also pay for JIT and cold caches.
await runLoad({ label: 'warm-up', baseUrl: stack.urls.public, connections, steps }, warmup);
await drained();
for (let run = 1; run <= runs; run++) {
  for (const mode of ['idle', 'streaming'] as const) {
    const load = { label: `${mode} ${run}`, baseUrl: stack.urls.public, connections, steps };
    let result: Awaited<ReturnType<typeof runLoad>>;
    if (mode === 'idle') {
      result = await runLoad(load, duration);
    } else {
      const started = Date.now();
      const flow = stream();
      result = await runLoad(load, duration);
      const seen = await flow.stop();
      streamed += seen.changes;
      streamedSeconds += (Date.now() - started) / 1000;
      lags.push(...seen.lags);
      await drained();
    }
    const row = {
      p50: result.latency.p50,
      p95: result.latency.p95,
      p99: result.latency.p99,
      rps: result.rps,
    };
    (mode === 'idle' ? idle : streaming).push(row);
    log(
      `${load.label}: ${Math.round(row.rps)} req/s, p50 ${ms(row.p50)}, p95 ${ms(row.p95)}, p99 ${ms(row.p99)}; errors ${result.errors}, wrong ${result.wrong}, non-2xx ${result.non2xx}`,
    );
  }
}

// The burst: as many changes as PostgreSQL takes, then how fast the layer makes them clean records.
const burstStart = Date.now();
for (let i = 0; i < burst; i++) await simulator.step();
const written = (Date.now() - burstStart) / 1000;
const drainMs = await drained();
const total = (Date.now() - burstStart) / 1000;

const median = (rows: typeof idle, key: 'p50' | 'p95' | 'p99' | 'rps') =>
  medianOf(rows.map((row) => row[key]));
const lines = [
  '',
  `legacy pipeline cost, ${runs} × ${duration} s per mode, ${connections} clients, mixed load (3 GraphQL reads, 1 REST read, 1 REST write per loop)`,
  `  idle:      p50 ${ms(median(idle, 'p50'))}, p95 ${ms(median(idle, 'p95'))}, p99 ${ms(median(idle, 'p99'))}, ${Math.round(median(idle, 'rps'))} req/s`,
  `  streaming: p50 ${ms(median(streaming, 'p50'))}, p95 ${ms(median(streaming, 'p95'))}, p99 ${ms(median(streaming, 'p99'))}, ${Math.round(median(streaming, 'rps'))} req/s  (generator asked for ${rate}/s, made ${(streamed / streamedSeconds).toFixed(1)}/s)`,
  `  ratio streaming ÷ idle: p95 ${(median(streaming, 'p95') / median(idle, 'p95')).toFixed(2)}, p99 ${(median(streaming, 'p99') / median(idle, 'p99')).toFixed(2)}, throughput ${(median(streaming, 'rps') / median(idle, 'rps')).toFixed(2)}`,
  `  CDC lag, legacy commit → clean read (${lags.length} probes under load): p50 ${ms(pct(lags, 0.5))}, p99 ${ms(pct(lags, 0.99))} (min ${ms(Math.min(...lags))}, max ${ms(Math.max(...lags))})`,
  `  burst: ${burst} changes written in ${written.toFixed(1)} s, clean ${(drainMs / 1000).toFixed(1)} s later: the layer sustained ${(burst / total).toFixed(1)} changes/s`,
  '',
];
process.stdout.write(lines.join('\n'));
await db.end();
await stack.stop();
