import type { CaseResult, ScenarioContext, ScenarioName, Side } from '../scenarios/types.js';
import { assertClean, type LoadResult, type LoadSpec, measure, runLoad, summarizeRuns } from './load.js';
import type { ServiceName } from './stack.js';
import { ratio } from './stats.js';

export interface CaseSpec {
  readonly scenario: ScenarioName;
  readonly name: string;
  readonly connections: number;
  /** Builds a fresh load (fresh verdict counters) for a side. */
  readonly load: (side: Side) => LoadSpec;
  /** The server processes whose CPU counts for a side. */
  readonly servers: (side: Side) => readonly ServiceName[];
}

/**
 * Measures one case on every side: a warm-up per side (excluded), then `runs` measured runs,
 * alternating which side goes first so slow drifts of a shared machine hit both alike.
 * Any wrong answer, connection error or timeout throws a GateError.
 */
export async function compareCase(context: ScenarioContext, spec: CaseSpec): Promise<CaseResult> {
  const { plan, sides, stack } = context;
  for (const side of sides) {
    if (plan.warmupSec > 0) assertClean(await runLoad(spec.load(side), plan.warmupSec));
  }
  const runs: Record<Side, LoadResult[]> = { ours: [], baseline: [] };
  const cpu: Record<Side, number[]> = { ours: [], baseline: [] };
  for (let i = 0; i < plan.runs; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const run = await measure([spec.load(side)], plan.durationSec, stack.pids(spec.servers(side)));
      const load = run.loads[0]!;
      assertClean(load);
      runs[side].push(load);
      cpu[side].push(run.cpuMsPerRequest);
    }
  }
  const ours = sides.includes('ours') ? summarizeRuns(runs.ours, cpu.ours) : null;
  const baseline = sides.includes('baseline') ? summarizeRuns(runs.baseline, cpu.baseline) : null;
  const result: CaseResult = {
    scenario: spec.scenario,
    case: spec.name,
    connections: spec.connections,
    ours,
    baseline,
    ratios: {
      rps: ratio(ours?.rps, baseline?.rps),
      p99: ratio(ours?.p99, baseline?.p99),
      cpuMsPerRequest: ratio(ours?.cpuMsPerRequest, baseline?.cpuMsPerRequest),
    },
  };
  context.log(describeCase(result));
  return result;
}

export function describeCase(result: CaseResult): string {
  const side = (label: string, s: CaseResult['ours']) =>
    s
      ? `${label} ${s.rps.toFixed(0)} req/s p99 ${s.p99.toFixed(2)} ms ${s.cpuMsPerRequest.toFixed(3)} cpu-ms/req`
      : '';
  const r = result.ratios.rps;
  return [
    `  ${result.scenario}/${result.case} (c=${result.connections}):`,
    side('ours', result.ours),
    side('| baseline', result.baseline),
    r === null ? '' : `| ratio ${r.toFixed(2)}`,
  ]
    .filter(Boolean)
    .join(' ');
}

/** A case result from runs measured elsewhere (e.g. two loads side by side). */
export function compareCaseFromRuns(
  scenario: ScenarioName,
  name: string,
  connections: number,
  runs: {
    ours: readonly LoadResult[] | null;
    baseline: readonly LoadResult[] | null;
    oursCpu: readonly number[];
    baselineCpu: readonly number[];
  },
): CaseResult {
  const ours = runs.ours && runs.ours.length > 0 ? summarizeRuns(runs.ours, runs.oursCpu) : null;
  const baseline =
    runs.baseline && runs.baseline.length > 0 ? summarizeRuns(runs.baseline, runs.baselineCpu) : null;
  return {
    scenario,
    case: name,
    connections,
    ours,
    baseline,
    ratios: {
      rps: ratio(ours?.rps, baseline?.rps),
      p99: ratio(ours?.p99, baseline?.p99),
      cpuMsPerRequest: ratio(ours?.cpuMsPerRequest, baseline?.cpuMsPerRequest),
    },
  };
}
