/**
 * `pnpm bench`: runs the load scenarios against our services and their baselines in the same run
 * and writes perf/results/<date>-<commit>.{json,md} plus SVG charts.
 *
 *   --quick               tiny data, ~1 s runs, 1 run: a correctness smoke (asserts zero errors, judges no timing)
 *   --scenario NAME[,..]  only these scenarios (repeatable); default: all
 *   --preset NAME         small (default) | medium | national | tiny
 *   --runs N --duration S --warmup S --connections N   override the plan
 *   --baselines-only      measure only the baselines (our services need not be built)
 *   --regenerate          rebuild the cached dataset
 *   --results-dir DIR     where to write the report (default perf/results)
 *   --keep                keep the run directory (data copy, logs) under perf/.work/runs
 */
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Dataset, utcMidnight } from './data/dataset.js';
import { isPresetName, type PresetName, presets } from './data/presets.js';
import { mulberry32 } from './data/prng.js';
import { ensureDataset } from './generate.js';
import { machineFacts, resultsDir, shortCommit, workDir } from './lib/env.js';
import { GateError } from './lib/gate.js';
import { checkProjections, metricValue, waitForProjections } from './lib/projections.js';
import { type BenchReport, judgeTargets, type SetupFigures, writeReport } from './lib/report.js';
import { missingEntries, type OurService, type ServiceName, Stack } from './lib/stack.js';
import { scenarios } from './scenarios/index.js';
import {
  executionOrder,
  type Plan,
  type ScenarioResult,
  type Side,
  scenarioNames,
} from './scenarios/types.js';

function options() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      scenario: { type: 'string', multiple: true },
      preset: { type: 'string' },
      seed: { type: 'string', default: '1' },
      runs: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'baselines-only': { type: 'boolean', default: false },
      regenerate: { type: 'boolean', default: false },
      'results-dir': { type: 'string' },
      keep: { type: 'boolean', default: false },
    },
  });
  const quick = values.quick;
  const number = (text: string | undefined, fallback: number, what: string): number => {
    if (text === undefined) return fallback;
    const v = Number(text);
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${what} must be a number`);
    return v;
  };
  const plan: Plan = {
    runs: Math.max(1, Math.round(number(values.runs, quick ? 1 : 3, 'runs'))),
    durationSec: number(values.duration, quick ? 1 : 10, 'duration'),
    warmupSec: number(values.warmup, quick ? 0.5 : 3, 'warmup'),
    connections: Math.max(1, Math.round(number(values.connections, quick ? 10 : 100, 'connections'))),
    quick,
  };
  const preset = values.preset ?? (quick ? 'tiny' : 'small');
  if (!isPresetName(preset)) throw new Error(`--preset must be one of ${Object.keys(presets).join(', ')}`);
  const selected = (values.scenario ?? []).flatMap((s) => s.split(',')).filter(Boolean);
  for (const s of selected) {
    if (!(scenarioNames as readonly string[]).includes(s))
      throw new Error(`unknown scenario ${s} (${scenarioNames.join(', ')})`);
  }
  return {
    plan,
    preset: preset as PresetName,
    seed: Math.round(number(values.seed, 1, 'seed')),
    scenarios: executionOrder.filter((name) => selected.length === 0 || selected.includes(name)),
    baselinesOnly: values['baselines-only'],
    regenerate: values.regenerate,
    resultsDir: values['results-dir'] ?? resultsDir,
    keep: values.keep,
  };
}

const log = (message: string) => console.log(message);

async function main(): Promise<number> {
  const o = options();
  const machine = machineFacts();
  const commit = shortCommit();
  const date = new Date().toISOString();
  const runDir = join(workDir, 'runs', `${date.replace(/[:.]/g, '-')}-${process.pid}`);
  const chosen = o.scenarios.map((name) => scenarios[name]);
  const oursNeeded = [...new Set(chosen.flatMap((s) => s.services.ours))] as OurService[];
  const sides: Side[] = o.baselinesOnly ? ['baseline'] : ['ours', 'baseline'];
  log(
    `eggmesh bench: ${o.scenarios.join(', ')} | preset ${o.preset} | ${o.plan.runs} × ${o.plan.durationSec} s, warm-up ${o.plan.warmupSec} s, ${o.plan.connections} connections | ${machine.cores} cores | ${commit}`,
  );

  const setup: { -readonly [K in keyof SetupFigures]: SetupFigures[K] } = {};
  let anchorMs = utcMidnight();
  let head = 0;
  if (!o.baselinesOnly) {
    const missing = missingEntries(
      oursNeeded.includes('read-api') ? [...oursNeeded, 'projector'] : oursNeeded,
    );
    if (missing.length > 0) {
      throw new Error(
        `our services are not built (missing ${missing.join(', ')}); run \`pnpm run build\` or pass --baselines-only`,
      );
    }
    const prepared = await ensureDataset(o.preset, o.seed, { force: o.regenerate });
    anchorMs = prepared.manifest.anchorMs;
    head = prepared.manifest.head;
    setup.generation = {
      seconds: prepared.manifest.seconds,
      rowsPerSecond: prepared.manifest.rowsPerSecond,
      cached: !prepared.generated,
    };
    cpSync(prepared.dataDir, join(runDir, 'data'), { recursive: true });
  }
  const dataset = new Dataset({ preset: presets[o.preset], seed: o.seed, anchorMs });
  const stack = new Stack({
    dataDir: join(runDir, 'data'),
    logDir: join(runDir, 'logs'),
    bareDbFile: join(runDir, 'bare-rest.db'),
    dataset: { preset: o.preset, seed: o.seed, anchorMs },
  });
  const stopOnSignal = () => {
    void stack.stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);

  const results: ScenarioResult[] = [];
  let failure: string | undefined;
  try {
    if (!o.baselinesOnly && oursNeeded.some((s) => s === 'read-api' || s === 'projector')) {
      // The projector starts on a log nobody has projected yet: this is the rebuild throughput too.
      await stack.ensure(['read-api']);
      const started = performance.now();
      await stack.start('projector');
      const ready = performance.now();
      const appliedAtReady = await metricValue(
        `${stack.url('projector')}/metrics`,
        'eggmesh_projector_position',
      );
      await waitForProjections(stack.url('read-api'), dataset, head, 3_600_000);
      const done = performance.now();
      const seconds = (done - started) / 1000;
      // Steady rate: from the moment the projector answers, using its own position (process start excluded).
      const steady =
        appliedAtReady !== null && head - appliedAtReady >= 1_000
          ? (head - appliedAtReady) / ((done - ready) / 1000)
          : undefined;
      setup.projectorCatchUp = {
        events: head,
        seconds,
        eventsPerSecond: head / seconds,
        ...(steady !== undefined ? { steadyEventsPerSecond: steady } : {}),
      };
      log(
        `projector applied ${head.toLocaleString('en-US')} log entries in ${seconds.toFixed(2)} s` +
          (steady !== undefined ? ` (steady ${Math.round(steady).toLocaleString('en-US')}/s)` : ''),
      );
      const documents = await checkProjections(stack.url('read-api'), dataset);
      setup.projectionCheck = { documents, ok: true };
      log(`projection check: ${documents} sampled documents match`);
    }
    for (const scenario of chosen) {
      const wanted: ServiceName[] = [
        ...(o.baselinesOnly ? [] : scenario.services.ours),
        ...scenario.services.baseline,
      ];
      log(`${scenario.name}: starting ${wanted.join(', ')}`);
      await stack.ensure(wanted);
      results.push(
        await scenario.run({
          plan: o.plan,
          dataset,
          stack,
          sides,
          rng: mulberry32(o.seed ^ 0xbe7c4),
          log,
        }),
      );
    }
  } catch (error) {
    failure =
      error instanceof GateError
        ? `correctness gate: ${error.message}`
        : String((error as Error).stack ?? error);
    console.error(`\nFAILED: ${failure}`);
  } finally {
    await stack.stopAll();
  }

  const partial: Omit<BenchReport, 'targets'> = {
    schemaVersion: 1,
    date,
    commit,
    machine,
    preset: o.preset,
    seed: o.seed,
    counts: dataset.counts,
    plan: o.plan,
    baselinesOnly: o.baselinesOnly,
    setup,
    scenarios: results,
    ...(failure ? { failure } : {}),
  };
  const report: BenchReport = { ...partial, targets: judgeTargets(partial) };
  const suffix = o.plan.quick ? '-quick' : o.preset === 'small' ? '' : `-${o.preset}`;
  const files = writeReport(o.resultsDir, `${date.slice(0, 10)}-${commit}${suffix}`, report);
  log(`report: ${files.join(', ')}`);
  if (failure) {
    log(`logs and data kept in ${runDir}`);
    return 1;
  }
  if (!o.keep) rmSync(runDir, { recursive: true, force: true });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
