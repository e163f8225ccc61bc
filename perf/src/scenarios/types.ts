import type { Dataset } from '../data/dataset.js';
import type { Rng } from '../data/prng.js';
import type { SideSummary } from '../lib/load.js';
import type { BaselineService, OurService, Stack } from '../lib/stack.js';

export const scenarioNames = [
  'rest-crud',
  'crud-sequence',
  'graphql-queries',
  'federation-depth',
  'mixed-workload',
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
  'rest-crud',
  'crud-sequence',
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
  /** Smoke mode: correctness only, timings are not meaningful. */
  readonly quick: boolean;
}

export type Side = 'ours' | 'baseline';

export interface ScenarioContext {
  readonly plan: Plan;
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
}

export interface Scenario {
  readonly name: ScenarioName;
  readonly description: string;
  /** The processes this scenario needs per side (everything else is stopped while it runs). */
  readonly services: { readonly ours: readonly OurService[]; readonly baseline: readonly BaselineService[] };
  run(context: ScenarioContext): Promise<ScenarioResult>;
}
