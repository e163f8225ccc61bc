import type { Dataset } from '../data/dataset.js';
import type { PresetName } from '../data/presets.js';
import type { Rng } from '../data/prng.js';
import type { SideSummary } from '../lib/load.js';
import type { RebuildFigures } from '../lib/rebuild.js';
import type { BaselineService, OurLaunch, OurService, Stack, StackOptions } from '../lib/stack.js';
import type { LatencyResult } from './latency.js';
import type { SoakResult } from './soak.js';

export const scenarioNames = [
  'rest-crud',
  'crud-sequence',
  'graphql-queries',
  'federation-depth',
  'mixed-workload',
  'latency',
  'soak',
  'scaling',
  'subscriptions',
  'querying',
] as const;
export type ScenarioName = (typeof scenarioNames)[number];

/**
 * The order scenarios run in, whatever order they were asked for: reads first, because the GraphQL
 * gates compare with the generated data and the REST scenarios add farms, coops and containers.
 */
export const executionOrder: readonly ScenarioName[] = [
  'graphql-queries',
  'federation-depth',
  'mixed-workload',
  // Deletes every farm it creates, so the later GraphQL-free scenarios see the same tables.
  'latency',
  'rest-crud',
  'crud-sequence',
  // Ours only: the live projections (adds one container and deposits into it).
  'subscriptions',
  // Minutes long, ours only: memory over a mixed workload.
  'soak',
  // Ours against hand-written SQL, on its own projected copy of the run's dataset.
  'querying',
  // Last: it runs on its own copies of two datasets, with everything else stopped.
  'scaling',
];

/** How long and how hard to load. */
export interface Plan {
  /** Measured runs per case and side; the median is reported. */
  readonly runs: number;
  readonly durationSec: number;
  /** A run before the measured ones, excluded from the results. */
  readonly warmupSec: number;
  /** Connections for scenarios without their own sweep. */
  readonly connections: number;
  /** Length of the soak scenario (`--duration` when given, else 600 s; 5 s with --quick). */
  readonly soakSec: number;
  /** Smoke mode: correctness only, timings are not meaningful. */
  readonly quick: boolean;
}

export type Side = 'ours' | 'baseline';

/**
 * A dataset copied into the run directory and projected by `rebuild.js` (so it is complete and
 * never touched by the other scenarios), with what a Stack on it needs.
 */
export interface ProjectedData {
  readonly preset: PresetName;
  readonly dataset: Dataset;
  readonly dataDir: string;
  readonly stackOptions: StackOptions;
  readonly rebuild: RebuildFigures;
}

export interface ScenarioContext {
  readonly plan: Plan;
  /** The run's preset (`small`, or `tiny` with --quick): the small end of the scaling curve. */
  readonly preset: PresetName;
  /** The large end of the scaling curve (`--scaling-large`). */
  readonly scalingLarge: PresetName;
  /** A projected copy of a preset's dataset (generated first if missing), made once per run. */
  projected(preset: PresetName): Promise<ProjectedData>;
  readonly dataset: Dataset;
  readonly stack: Stack;
  /** The sides measured in this run (only the baseline with --baselines-only). */
  readonly sides: readonly Side[];
  readonly rng: Rng;
  log(message: string): void;
}

export interface Ratios {
  /** ours ÷ baseline req/s (higher is better). */
  readonly rps: number | null;
  /** ours ÷ baseline p99 latency (lower is better). */
  readonly p99: number | null;
  readonly cpuMsPerRequest: number | null;
}

export interface CaseResult {
  readonly scenario: ScenarioName;
  readonly case: string;
  readonly connections: number;
  readonly ours: SideSummary | null;
  readonly baseline: SideSummary | null;
  readonly ratios: Ratios;
}

export interface ScenarioResult {
  readonly name: ScenarioName;
  readonly description: string;
  readonly cases: readonly CaseResult[];
  /** Scenario-specific figures, e.g. `lag_p99_ms`. */
  readonly figures: Readonly<Record<string, number>>;
  readonly notes: readonly string[];
  /** The `scaling` scenario's curve (its cases have no baseline side). */
  readonly scaling?: ScalingResult;
  /** The `latency` scenario's percentiles (front door, direct, baseline). */
  readonly latency?: LatencyResult;
  /** The `soak` scenario's RSS curves. */
  readonly soak?: SoakResult;
}

export type ScalingKind = 'getById' | 'filtered' | 'depth3';

/** Latency of one query on one dataset size. */
export interface ScalingPoint {
  readonly preset: PresetName;
  /** Rows in the dataset (actors + events). */
  readonly rows: number;
  readonly summary: SideSummary;
}

export interface ScalingQuery {
  readonly name: string;
  readonly kind: ScalingKind;
  /** One per dataset size, smallest first. */
  readonly points: readonly ScalingPoint[];
  /** Large ÷ small (lower is better; the target is ≤ 2 for getById and filtered). */
  readonly p99Ratio: number | null;
  readonly p50Ratio: number | null;
  /** Large ÷ small req/s (higher is better). */
  readonly rpsRatio: number | null;
}

export interface ScalingResult {
  readonly small: PresetName;
  readonly large: PresetName;
  readonly connections: number;
  readonly queries: readonly ScalingQuery[];
}

export interface Scenario {
  readonly name: ScenarioName;
  readonly description: string;
  /** The processes this scenario needs per side (everything else is stopped while it runs). */
  readonly services: { readonly ours: readonly OurService[]; readonly baseline: readonly BaselineService[] };
  /** How our services run in this scenario, over the bench's own settings (restarted when it differs). */
  readonly ourLaunch?: OurLaunch;
  run(context: ScenarioContext): Promise<ScenarioResult>;
}
