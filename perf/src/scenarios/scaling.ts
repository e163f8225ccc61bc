import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Dataset } from '../data/dataset.js';
import { check, checkEqual, GateError, graphql } from '../lib/gate.js';
import { assertClean, type LoadResult, type LoadSpec, measure, runLoad, summarizeRuns } from '../lib/load.js';
import { Stack } from '../lib/stack.js';
import { ratio } from '../lib/stats.js';
import { graphStep, Picker } from './common.js';
import { expectedTree, normalise } from './federation-depth.js';
import { queryCases } from './graphql-queries.js';
import { queries } from './queries.js';
import type {
  CaseResult,
  ProjectedData,
  ScalingKind,
  ScalingPoint,
  ScalingQuery,
  Scenario,
  ScenarioContext,
} from './types.js';

type Doc = Record<string, unknown>;

/**
 * Reads every file under `dir` once, so the page cache holds the data as it does on a server that has
 * been serving it: right after the copy and the rebuild of a large dataset, the first reads of a cold
 * cache go to disk and answer in seconds (national depth 3: over 4 s), which measures the disk, not the
 * read path. Returns the bytes read.
 */
function warmPageCache(dir: string): number {
  const buffer = Buffer.allocUnsafe(8 * 1024 * 1024);
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const fd = openSync(join(entry.parentPath, entry.name), 'r');
    try {
      for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) bytes += n;
    } finally {
      closeSync(fd);
    }
  }
  return bytes;
}

/** The queries of the curve: which graphql-queries case (or the depth-3 tree) and its kind. */
export const scalingQueries: readonly { readonly name: string; readonly kind: ScalingKind }[] = [
  { name: 'farm getById', kind: 'getById' },
  { name: 'hen getById', kind: 'getById' },
  { name: 'coop getByFarm', kind: 'filtered' },
  { name: 'hen getByCoop', kind: 'filtered' },
  { name: 'depth 3 (farm→coops→hens)', kind: 'depth3' },
];

/** One dataset size: its projected copy, its own read-api, and a request picker over its rows. */
interface Size {
  readonly data: ProjectedData;
  readonly stack: Stack;
  readonly picker: Picker;
  readonly url: string;
  readonly pid: number;
}

/** The load of query `name` on one size. */
function loadSpec(size: Size, name: string, connections: number): LoadSpec {
  const label = `scaling ${size.data.preset} ${name}`;
  if (name.startsWith('depth 3')) {
    return {
      label,
      baseUrl: size.url,
      connections,
      steps: [
        graphStep(
          'farm',
          'farmDepth3',
          () => ({ id: size.picker.id('farm') }),
          (v) => `"${v.id as string}"`,
        ),
      ],
    };
  }
  const q = queryCases(size.data.dataset).find((c) => c.name === name);
  if (!q) throw new Error(`scaling: no graphql-queries case named ${name}`);
  return {
    label,
    baseUrl: size.url,
    connections,
    steps: [graphStep(q.entity, q.query, () => q.variables(size.picker), q.mustContain)],
  };
}

/** Full-answer checks on a size before any load: the same gates as graphql-queries and federation-depth. */
async function gate(size: Size): Promise<void> {
  const dataset: Dataset = size.data.dataset;
  const preset = size.data.preset;
  for (const q of queryCases(dataset)) {
    if (!scalingQueries.some((s) => s.name === q.name)) continue;
    const ask = (variables: Record<string, unknown>) =>
      graphql(`${size.url}/${q.entity}/graph`, queries[q.query], variables);
    try {
      await q.gate(ask, dataset);
    } catch (error) {
      throw new GateError(`scaling ${preset} ${q.name}: ${(error as Error).message}`);
    }
  }
  for (const f of [0, Math.floor(dataset.counts.farm / 2), dataset.counts.farm - 1]) {
    const data = await graphql(`${size.url}/farm/graph`, queries.farmDepth3, { id: dataset.id('farm', f) });
    const got = data.getById as Doc | null;
    check(got, `scaling ${preset}: farm ${f} missing`);
    checkEqual(normalise(got), expectedTree(dataset, f), `scaling ${preset} depth-3 tree of farm ${f}`);
  }
}

const describe = (name: string, preset: string, s: CaseResult['ours']) =>
  s
    ? `  scaling/${name} @ ${preset}: ${s.rps.toFixed(0)} req/s p50 ${s.p50.toFixed(2)} ms p99 ${s.p99.toFixed(2)} ms ${s.cpuMsPerRequest.toFixed(3)} cpu-ms/req`
    : '';

export const scaling: Scenario = {
  name: 'scaling',
  description:
    'Scaling curve: getById (farm, hen), filtered (coop getByFarm, hen getByCoop) and depth-3 latency on the small ' +
    'and a large dataset (national, or the one --scaling-large names), each a freshly projected copy served by its ' +
    'own read-api; both read-apis stay up and the sizes alternate run by run. The target: large ÷ small p99 ≤ 2 for ' +
    'getById and filtered (an index lookup, not a scan). No baseline side.',
  // Its own stacks on projected copies (context.projected); nothing from the run's stack.
  services: { ours: [], baseline: [] },
  async run(context: ScenarioContext) {
    const { plan } = context;
    const presets = [context.preset, context.scalingLarge];
    if (presets[0] === presets[1]) {
      throw new Error(`scaling: the large dataset (${presets[1]}) must differ from the run's preset`);
    }
    const sizes: Size[] = [];
    try {
      for (const preset of presets) {
        const data = await context.projected(preset);
        const warmStart = performance.now();
        const warmed = warmPageCache(data.dataDir);
        context.log(
          `  scaling: ${preset} files read once into the page cache (${(warmed / 1e9).toFixed(2)} GB, ${((performance.now() - warmStart) / 1000).toFixed(1)} s)`,
        );
        const stack = new Stack(data.stackOptions);
        await stack.ensure(['read-api']);
        const size: Size = {
          data,
          stack,
          picker: new Picker(data.dataset, context.rng),
          url: stack.url('read-api'),
          pid: stack.pids(['read-api'])[0]!,
        };
        sizes.push(size);
        await gate(size);
        context.log(
          `  scaling: ${preset} (${data.dataset.counts.total.toLocaleString('en-US')} rows) gate passed`,
        );
      }
      const connections = plan.connections;
      const cases: CaseResult[] = [];
      const curve: ScalingQuery[] = [];
      const figures: Record<string, number> = {};
      for (const q of scalingQueries) {
        for (const size of sizes) {
          if (plan.warmupSec > 0)
            assertClean(await runLoad(loadSpec(size, q.name, connections), plan.warmupSec));
        }
        const runs: LoadResult[][] = sizes.map(() => []);
        const cpu: number[][] = sizes.map(() => []);
        for (let i = 0; i < plan.runs; i++) {
          const order = i % 2 === 0 ? sizes : [...sizes].reverse();
          for (const size of order) {
            const k = sizes.indexOf(size);
            const run = await measure([loadSpec(size, q.name, connections)], plan.durationSec, [size.pid]);
            const load = run.loads[0]!;
            assertClean(load);
            runs[k]!.push(load);
            cpu[k]!.push(run.cpuMsPerRequest);
          }
        }
        const points: ScalingPoint[] = sizes.map((size, k) => ({
          preset: size.data.preset,
          rows: size.data.dataset.counts.total,
          summary: summarizeRuns(runs[k]!, cpu[k]!),
        }));
        for (const p of points) {
          context.log(describe(q.name, p.preset, p.summary));
          cases.push({
            scenario: 'scaling',
            case: `${q.name} @ ${p.preset}`,
            connections,
            ours: p.summary,
            baseline: null,
            ratios: { rps: null, p99: null, cpuMsPerRequest: null },
          });
        }
        const [small, large] = [points[0]!.summary, points[points.length - 1]!.summary];
        const entry: ScalingQuery = {
          name: q.name,
          kind: q.kind,
          points,
          p99Ratio: ratio(large.p99, small.p99),
          p50Ratio: ratio(large.p50, small.p50),
          rpsRatio: ratio(large.rps, small.rps),
        };
        curve.push(entry);
        if (entry.p99Ratio !== null) figures[`${q.name} p99 ${presets[1]}÷${presets[0]}`] = entry.p99Ratio;
        context.log(
          `  scaling/${q.name}: p99 ${presets[1]}÷${presets[0]} ${entry.p99Ratio?.toFixed(2) ?? '–'}, p50 ${entry.p50Ratio?.toFixed(2) ?? '–'}`,
        );
      }
      return {
        name: 'scaling',
        description: this.description,
        cases,
        figures,
        notes: [
          "Before the curve, each size's data files are read once into the page cache, as on a server that has been serving them; a cold cache answers from disk.",
        ],
        scaling: { small: presets[0]!, large: presets[1]!, connections, queries: curve },
      };
    } finally {
      for (const size of sizes) await size.stack.stopAll();
    }
  },
};
