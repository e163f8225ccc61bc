import { mulberry32 } from '../data/prng.js';
import { compareCaseFromRuns } from '../lib/compare.js';
import { checkEqual, graphql, http } from '../lib/gate.js';
import { assertClean, type LoadResult, type LoadSpec, measure, runLoad, type Step } from '../lib/load.js';
import { histogramBuckets, summarizeBuckets } from '../lib/projections.js';
import type { ServiceName } from '../lib/stack.js';
import { percentileInterval, summarizeLatencies } from '../lib/stats.js';
import { expectStatus, graphStep, Picker, urls } from './common.js';
import { LagProbe } from './lag-probe.js';
import { queries } from './queries.js';
import type { CaseResult, Scenario, ScenarioContext, Side } from './types.js';

/** The issue's projection lag target (ms), which the report judges. */
export const LAG_TARGET_MS = 50;
/** The level of the bootstrap interval reported around the client-seen lag p99. */
export const LAG_INTERVAL_LEVEL = 0.9;

const writerConnections = 10;

/** Event writes with valid references into the seeded actors (timestamps: now). */
export function writerSteps(context: ScenarioContext): Step[] {
  const { dataset, rng } = context;
  const picker = new Picker(dataset, rng);
  const now = () => new Date().toISOString();
  const post = (entity: string, payload: () => object): Step => ({
    method: 'POST',
    path: `/${entity}/api`,
    body: JSON.stringify(payload()),
    setup: (request) => ({ ...request, body: JSON.stringify(payload()) }),
    check: (status) => expectStatus(status, 201),
  });
  return [
    post('lay_report', () => {
      const h = picker.index('hen');
      const coop = dataset.coopOfHen(h);
      return {
        hen_id: dataset.id('hen', h),
        coop_id: dataset.id('coop', coop),
        farm_id: dataset.id('farm', dataset.farmOfCoop(coop)),
        eggs: rng.int(0, 6),
        timestamp: now(),
        quality: rng.pick(['grade_a', 'grade_b', 'cracked', 'double_yolk']),
      };
    }),
    post('storage_deposit', () => ({
      container_id: picker.id('container'),
      source_type: 'farm',
      source_id: picker.id('farm'),
      eggs: rng.int(1, 40),
      timestamp: now(),
    })),
    post('container_transfer', () => {
      const n = dataset.counts.container;
      const source = picker.index('container');
      const dest = (source + 1 + rng.int(0, n - 2)) % n;
      return {
        source_container_id: dataset.id('container', source),
        dest_container_id: dataset.id('container', dest),
        eggs: rng.int(1, 10),
        timestamp: now(),
        transport_method: 'van',
      };
    }),
    post('consumption_report', () => ({
      consumer_id: picker.id('consumer'),
      container_id: picker.id('container'),
      eggs: rng.int(1, 6),
      timestamp: now(),
      purpose: 'cooking',
    })),
  ];
}

/** Projection reads and relationship reads, interleaved. */
export function readerSteps(context: ScenarioContext): Step[] {
  const picker = new Picker(context.dataset, context.rng);
  const contains = (v: Record<string, unknown>) => `"${v.id as string}"`;
  return [
    graphStep('farm', 'farmDepth3Output', () => ({ id: picker.id('farm') }), contains),
    graphStep('farm_output', 'farmOutputByFarm', () => ({ id: picker.id('farm') }), contains),
    graphStep('container', 'containerWithInventory', () => ({ id: picker.id('container') }), contains),
    graphStep(
      'container_inventory',
      'inventoryByContainer',
      () => ({ id: picker.id('container') }),
      contains,
    ),
  ];
}

async function gateBaseline(context: ScenarioContext): Promise<void> {
  const { rest, graph } = urls(context, 'baseline');
  for (const step of writerSteps(context)) {
    const request = step.setup!({ method: step.method, path: step.path }, {})!;
    const answer = await http('POST', `${rest}${request.path}`, JSON.parse(request.body!));
    checkEqual(answer.status, 201, `baseline ${request.path}`);
  }
  await graphql(`${graph}/farm/graph`, queries.farmDepth3Output, { id: context.dataset.id('farm', 0) });
}

export const mixedWorkload: Scenario = {
  name: 'mixed-workload',
  description:
    'Event writes (lay report, deposit, transfer, consumption) at half the measured maximum write rate, ' +
    'interleaved with projection and relationship reads, projector running; a probe measures write-ack → ' +
    'visible-through-x-min-position lag.',
  services: { ours: ['write-api', 'read-api', 'projector'], baseline: ['bare-rest', 'bare-graphql'] },
  async run(context) {
    const { plan, sides, stack } = context;
    const servers = (side: Side): ServiceName[] =>
      side === 'ours' ? ['write-api', 'read-api', 'projector'] : ['bare-rest', 'bare-graphql'];
    const writers = (side: Side, rate?: number): LoadSpec => ({
      label: `mixed ${side} writes`,
      baseUrl: urls(context, side).rest,
      connections: writerConnections,
      steps: writerSteps(context),
      overallRate: rate,
    });
    const readers = (side: Side): LoadSpec => ({
      label: `mixed ${side} reads`,
      baseUrl: urls(context, side).graph,
      connections: plan.connections,
      steps: readerSteps(context),
    });

    let probe: LagProbe | null = null;
    if (sides.includes('ours')) {
      const { rest, graph } = urls(context, 'ours');
      probe = await LagProbe.prepare(rest, graph, context.dataset.id('farm', 0), context.rng);
    }
    if (sides.includes('baseline')) await gateBaseline(context);

    // The maximum write rate, measured on ours (on the baseline with --baselines-only).
    const rateSide: Side = sides.includes('ours') ? 'ours' : 'baseline';
    const max = await runLoad(writers(rateSide), Math.min(plan.durationSec, 5));
    assertClean(max);
    const rate = Math.max(writerConnections, Math.floor(max.rps / 2));
    context.log(`  mixed-workload: max write rate ${max.rps.toFixed(0)}/s (${rateSide}); offering ${rate}/s`);

    for (const side of sides) {
      if (plan.warmupSec > 0) {
        for (const r of await Promise.all([
          runLoad(writers(side, rate), plan.warmupSec),
          runLoad(readers(side), plan.warmupSec),
        ])) {
          assertClean(r);
        }
      }
    }
    const runs: Record<Side, { writes: LoadResult[]; reads: LoadResult[]; cpu: number[] }> = {
      ours: { writes: [], reads: [], cpu: [] },
      baseline: { writes: [], reads: [], cpu: [] },
    };
    // The projector's own account of the lag: each applied entry's age at its commit, as a histogram.
    const lagHistogram = () =>
      sides.includes('ours')
        ? histogramBuckets(`${stack.url('projector')}/metrics`, 'eggmesh_projector_apply_lag_seconds')
        : Promise.resolve(null);
    const appliedBefore = await lagHistogram();
    for (let i = 0; i < plan.runs; i++) {
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        const run = await measure(
          [writers(side, rate), readers(side)],
          plan.durationSec,
          stack.pids(servers(side)),
          side === 'ours' && probe ? (signal) => probe.runInWorker(signal) : undefined,
        );
        for (const load of run.loads) assertClean(load);
        runs[side].writes.push(run.loads[0]!);
        runs[side].reads.push(run.loads[1]!);
        runs[side].cpu.push(run.cpuMsPerRequest);
      }
    }
    const appliedAfter = await lagHistogram();
    const pick = (side: Side, what: 'writes' | 'reads') => (sides.includes(side) ? runs[side][what] : null);
    const cases: CaseResult[] = [
      compareCaseFromRuns('mixed-workload', `writes @ ${rate}/s`, writerConnections, {
        ours: pick('ours', 'writes'),
        baseline: pick('baseline', 'writes'),
        oursCpu: runs.ours.cpu,
        baselineCpu: runs.baseline.cpu,
      }),
      compareCaseFromRuns('mixed-workload', 'reads under writes', plan.connections, {
        ours: pick('ours', 'reads'),
        baseline: pick('baseline', 'reads'),
        oursCpu: runs.ours.cpu,
        baselineCpu: runs.baseline.cpu,
      }),
    ];
    for (const c of cases)
      context.log(`  mixed-workload/${c.case}: ratio ${c.ratios.rps?.toFixed(2) ?? '-'}`);
    const figures: Record<string, number> = { max_write_rps: max.rps, offered_write_rps: rate };
    if (probe && probe.samples.length > 0) {
      const lag = summarizeLatencies(probe.samples.values());
      figures.lag_p50_ms = lag.p50;
      figures.lag_p99_ms = lag.p99;
      figures.lag_max_ms = lag.max;
      figures.lag_samples = lag.count;
      // How far that p99 moves with its samples (seeded: the same samples give the same interval).
      const interval = percentileInterval(
        probe.samples.values(),
        99,
        mulberry32(1).next,
        undefined,
        LAG_INTERVAL_LEVEL,
      );
      if (interval) {
        figures.lag_p99_low_ms = interval.low;
        figures.lag_p99_high_ms = interval.high;
      }
      // Of the lag, what the read-api spent waiting for the projections (its server-timing).
      const wait = summarizeLatencies(probe.waits.values());
      figures.lag_wait_p50_ms = wait.p50;
      figures.lag_wait_p99_ms = wait.p99;
      context.log(
        `  mixed-workload: lag p50 ${lag.p50.toFixed(1)} ms, p99 ${lag.p99.toFixed(1)} ms (${lag.count} probes` +
          `${interval ? `, ${Math.round(LAG_INTERVAL_LEVEL * 100)} % interval ${interval.low.toFixed(1)}–${interval.high.toFixed(1)}` : ''}); ` +
          `of it waiting for the projections p50 ${wait.p50.toFixed(1)} ms, p99 ${wait.p99.toFixed(1)} ms`,
      );
    }
    const applied =
      appliedBefore && appliedAfter ? summarizeBuckets(appliedBefore, appliedAfter, LAG_TARGET_MS) : null;
    if (applied) {
      figures.projector_lag_p50_at_most_ms = applied.p50AtMostMs;
      figures.projector_lag_p99_at_most_ms = applied.p99AtMostMs;
      figures.projector_lag_within_target_share = applied.withinShare;
      figures.projector_lag_entries = applied.count;
      context.log(
        `  mixed-workload: projector's apply lag (write → projection commit, ${applied.count} entries): ` +
          `p50 ≤ ${applied.p50AtMostMs} ms, p99 ≤ ${applied.p99AtMostMs} ms, ${(applied.withinShare * 100).toFixed(2)} % within ${LAG_TARGET_MS} ms`,
      );
    }
    return {
      name: 'mixed-workload',
      description: this.description,
      cases,
      figures,
      notes: [
        `Both sides get the same offered write rate, ${rate}/s: half the maximum measured on ${rateSide === 'ours' ? 'our services' : 'the baseline'} (${max.rps.toFixed(0)}/s); ` +
          'the baseline has no projector and no lag. CPU per request counts all server processes of a side over all requests.',
      ],
    };
  },
};
