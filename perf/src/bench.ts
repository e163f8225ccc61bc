/**
 * `pnpm bench`: runs the load scenarios against our services and their baselines in the same run
 * and writes perf/results/<date>-<commit>.{json,md} plus SVG charts.
 *
 *   --quick               tiny data, ~1 s runs, 1 run: a correctness smoke (asserts zero errors, judges no timing)
 *   --scenario NAME[,..]  only these scenarios (repeatable); default: all; `none` for only the rebuilds
 *   --preset NAME         small (default) | medium | national | tiny
 *   --runs N --duration S --warmup S --connections N   override the plan
 *   --baselines-only      measure only the baselines (our services need not be built)
 *   --equipped-baselines  the baselines wear eggmesh's service plugin (security headers, CORS, overload
 *                         shedding, metrics): ours against bare servers with the same plugins, which
 *                         tells what the plugins cost from what the rest of our services costs
 *   --regenerate          rebuild the cached dataset
 *   --results-dir DIR     where to write the report (default perf/results)
 *   --keep                keep the run directory (data copy, logs) under perf/.work/runs
 *   --scaling-large NAME  the large end of the scaling curve (default: national if generated, else medium;
 *                         small with --quick)
 *   --rebuild LIST|auto|none  presets whose projector rebuild (rebuild.js) is timed; auto (default): in a full
 *                         run (no --quick, no --scenario) the medium and national datasets already generated
 *   --store sqlite|mongodb  the tier our services run on (default sqlite); mongodb starts a MongoDB-wire test
 *                         server (mongo-java-server), loads the dataset into it and runs our services with
 *                         EGGMESH_STORE=mongodb; the baselines stay the same; no rebuilds or scaling curve
 *   --cpu-prof            V8 CPU profiles of the servers (ours and baselines) and the rebuilds (implies
 *                         --keep; summarised in the report); profiling slows them, so do not quote a
 *                         profiled run's throughput
 */
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type CliOption, type CommandSpec, parseCommandLine } from '@eggmesh/service-kit';
import {
  serverName as kafkaServerName,
  type RunningBroker,
  start as startKafka,
} from '../../infra/kafka/server.mjs';
import { type RunningServer, serverName } from '../../infra/mongodb/server.mjs';
import { Dataset, utcMidnight } from './data/dataset.js';
import { isPresetName, type PresetName, presets } from './data/presets.js';
import { mulberry32 } from './data/prng.js';
import { defaultDatasetDir, ensureDataset, isCurrent, readManifest } from './generate.js';
import { type ProfileSummary, summarizeProfilesIn } from './lib/cpuprofile.js';
import { exists, machineFacts, repoRoot, resultsDir, shortCommit, workDir } from './lib/env.js';
import { GateError } from './lib/gate.js';
import { mongoNote, type StoreFigures, startMongoTier } from './lib/mongo.js';
import { checkProjections, metricValue, waitForProjections } from './lib/projections.js';
import { type RebuildFigures, rebuildEntry, runRebuild } from './lib/rebuild.js';
import { type BenchReport, judgeTargets, type SetupFigures, writeReport } from './lib/report.js';
import { missingEntries, type OurService, type ServiceName, Stack } from './lib/stack.js';
import { scenarios } from './scenarios/index.js';
import {
  executionOrder,
  type Plan,
  type ProjectedData,
  type ScenarioResult,
  type Side,
  scenarioNames,
} from './scenarios/types.js';

/** Whether a current generated dataset of `preset` is on disk. */
const present = (preset: PresetName, seed: number): boolean => isCurrent(defaultDatasetDir(preset, seed));

/** `pnpm bench --help`: the flags above, for the terminal. */
const spec = {
  command: 'pnpm bench',
  summary:
    'Builds, then runs the load scenarios against our services and bare baselines in the same run; writes\nperf/results/<date>-<commit>.{json,md} and SVG charts. Method and flags in detail: perf/README.md.\nThe services it starts inherit this environment, with host, data directory and ports set by the bench.',
  options: {
    quick: {
      type: 'boolean',
      description: 'tiny data, ~1 s runs, 1 run: a correctness smoke (judges no timing)',
    },
    scenario: {
      type: 'string',
      multiple: true,
      value: 'NAME[,NAME]',
      description: `only these scenarios (${scenarioNames.join(', ')}; none: only the rebuilds)`,
    },
    preset: { type: 'string', value: 'NAME', description: 'tiny | small (default) | medium | national' },
    seed: { type: 'string', value: 'N', description: 'dataset seed (default 1)' },
    runs: { type: 'string', value: 'N', description: 'runs per scenario (default 3, --quick 1)' },
    duration: { type: 'string', value: 'S', description: 'seconds per run (default 10, --quick 1)' },
    warmup: { type: 'string', value: 'S', description: 'warm-up seconds (default 3, --quick 0.5)' },
    connections: {
      type: 'string',
      value: 'N',
      description: 'concurrent connections (default 100, --quick 10)',
    },
    'baselines-only': { type: 'boolean', description: 'measure only the baselines' },
    'equipped-baselines': {
      type: 'boolean',
      description: "the baselines register eggmesh's service plugin (headers, CORS, overload, metrics)",
    },
    regenerate: { type: 'boolean', description: 'rebuild the cached dataset' },
    'results-dir': {
      type: 'string',
      value: 'DIR',
      description: 'where to write the report (default perf/results)',
    },
    keep: { type: 'boolean', description: 'keep the run directory under perf/.work/runs' },
    'scaling-large': { type: 'string', value: 'NAME', description: 'the large end of the scaling curve' },
    rebuild: {
      type: 'string',
      value: 'LIST|auto|none',
      description: 'presets whose projection rebuild is timed (default auto)',
    },
    'cpu-prof': {
      type: 'boolean',
      description: 'V8 CPU profiles of every server and rebuild (implies --keep)',
    },
    log: {
      type: 'string',
      value: 'store|kafka',
      description:
        'where the projector reads the event log (default store; kafka starts a local Kafka broker and runs the relay)',
    },
    store: {
      type: 'string',
      value: 'sqlite|mongodb',
      description:
        'the primary store our services run on (default sqlite; mongodb starts the local MongoDB-wire server)',
    },
  },
  env: [],
} as const satisfies CommandSpec<Readonly<Record<string, CliOption>>>;

/** Scenarios that run their own read-api on a projected copy of a dataset (no baseline side). */
const onProjectedCopies: ReadonlySet<string> = new Set(['scaling', 'querying']);

function options() {
  const parsed = parseCommandLine(spec);
  const values = {
    ...parsed,
    quick: parsed.quick ?? false,
    seed: parsed.seed ?? '1',
    'baselines-only': parsed['baselines-only'] ?? false,
    'equipped-baselines': parsed['equipped-baselines'] ?? false,
    regenerate: parsed.regenerate ?? false,
    keep: parsed.keep ?? false,
    rebuild: parsed.rebuild ?? 'auto',
    'cpu-prof': parsed['cpu-prof'] ?? false,
    store: parsed.store ?? 'sqlite',
    log: parsed.log ?? 'store',
  };
  const eventLog = values.log;
  if (eventLog !== 'store' && eventLog !== 'kafka') throw new Error('--log must be store or kafka');
  const store = values.store;
  if (store !== 'sqlite' && store !== 'mongodb') throw new Error('--store must be sqlite or mongodb');
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
    // The MongoDB-wire test server scans for every filter beyond _id: at 10 or 100 connections its
    // depth-3 reads do not finish within a warm-up, so its default is 5.
    connections: Math.max(
      1,
      Math.round(number(values.connections, store === 'mongodb' ? 5 : quick ? 10 : 100, 'connections')),
    ),
    soakSec: number(values.duration, quick ? 5 : 600, 'duration'),
    quick,
  };
  // The test server keeps everything in a 256 MiB Java heap: loading the small preset kills it.
  const preset = values.preset ?? (quick || store === 'mongodb' ? 'tiny' : 'small');
  if (!isPresetName(preset)) throw new Error(`--preset must be one of ${Object.keys(presets).join(', ')}`);
  const selected = (values.scenario ?? []).flatMap((s) => s.split(',')).filter(Boolean);
  // `--scenario none`: no load scenario, e.g. only the rebuilds (`--scenario none --rebuild medium`).
  const none = selected.includes('none');
  for (const s of selected) {
    if (s !== 'none' && !(scenarioNames as readonly string[]).includes(s))
      throw new Error(`unknown scenario ${s} (${scenarioNames.join(', ')})`);
  }
  const seed = Math.round(number(values.seed, 1, 'seed'));
  const large =
    values['scaling-large'] ?? (quick ? 'small' : present('national', seed) ? 'national' : 'medium');
  if (!isPresetName(large))
    throw new Error(`--scaling-large must be one of ${Object.keys(presets).join(', ')}`);
  let rebuild: PresetName[];
  if (values.rebuild === 'none') rebuild = [];
  else if (values.rebuild === 'auto') {
    // A full run (no --quick, no --scenario) times the rebuilds of the big datasets already generated;
    // a targeted run only when asked (--rebuild), since national alone takes about ten minutes.
    const full = !quick && selected.length === 0;
    rebuild = full ? (['medium', 'national'] as const).filter((p) => present(p, seed)) : [];
    for (const p of ['medium', 'national'] as const) {
      if (full && !rebuild.includes(p) && readManifest(defaultDatasetDir(p, seed)) !== null)
        console.log(
          `note: the ${p} dataset on disk is stale (another generator version or primary storage layout); its rebuild is skipped (regenerate: node perf/dist/generate.js --preset ${p} --force)`,
        );
    }
  } else {
    rebuild = values.rebuild
      .split(',')
      .filter(Boolean)
      .map((p) => {
        if (!isPresetName(p)) throw new Error(`--rebuild: unknown preset ${p}`);
        return p;
      });
  }
  return {
    plan,
    preset: preset as PresetName,
    seed,
    scalingLarge: large as PresetName,
    rebuild,
    cpuProf: values['cpu-prof'],
    store,
    eventLog,
    // The scaling curve and the querying scenario project whole datasets with the SQLite rebuild
    // (and querying reads the SQLite file beside): embedded tier only.
    scenarios: none
      ? []
      : executionOrder.filter(
          (name) =>
            (selected.length === 0 || selected.includes(name)) &&
            !(store === 'mongodb' && onProjectedCopies.has(name)),
        ),
    baselinesOnly: values['baselines-only'],
    equippedBaselines: values['equipped-baselines'],
    regenerate: values.regenerate,
    resultsDir: values['results-dir'] ?? resultsDir,
    keep: values.keep || values['cpu-prof'],
  };
}

const log = (message: string) => console.log(message);

async function main(): Promise<number> {
  const o = options();
  const machine = machineFacts();
  const commit = shortCommit();
  const date = new Date().toISOString();
  const runDir = join(workDir, 'runs', `${date.replace(/[:.]/g, '-')}-${process.pid}`);
  // The scaling curve and querying have no baseline side: nothing to measure with --baselines-only.
  const chosen = o.scenarios
    .filter((name) => !(o.baselinesOnly && onProjectedCopies.has(name)))
    .map((name) => scenarios[name]);
  const scalingChosen = chosen.some((s) => s.name === 'scaling');
  const copiesChosen = chosen.some((s) => onProjectedCopies.has(s.name));
  // Rebuilds time the SQLite rebuild.js: embedded tier only.
  const rebuildPresets = o.baselinesOnly || o.store === 'mongodb' ? [] : o.rebuild;
  const oursNeeded = [...new Set(chosen.flatMap((s) => s.services.ours))] as OurService[];
  const sides: Side[] = o.baselinesOnly ? ['baseline'] : ['ours', 'baseline'];
  const profileDir = o.cpuProf ? join(runDir, 'profiles') : undefined;
  log(
    `eggmesh bench: ${chosen.map((s) => s.name).join(', ')} | preset ${o.preset} | ${o.plan.runs} × ${o.plan.durationSec} s, warm-up ${o.plan.warmupSec} s, ${o.plan.connections} connections | ${machine.cores} cores | ${commit}` +
      (scalingChosen ? ` | scaling ${o.preset} vs ${o.scalingLarge}` : '') +
      (rebuildPresets.length > 0 ? ` | rebuild ${rebuildPresets.join(', ')}` : '') +
      (profileDir ? ' | CPU-PROFILED (throughput not comparable)' : '') +
      (o.equippedBaselines ? " | baselines equipped with eggmesh's service plugin" : '') +
      (o.store === 'mongodb' ? ` | store mongodb (${serverName}: ${mongoNote})` : '') +
      (o.eventLog === 'kafka' ? ` | log kafka (${kafkaServerName})` : ''),
  );

  const setup: { -readonly [K in keyof SetupFigures]: SetupFigures[K] } = {};
  const rebuilds: RebuildFigures[] = [];
  let anchorMs = utcMidnight();
  let head = 0;
  if (!o.baselinesOnly) {
    const missing = missingEntries(
      oursNeeded.includes('read-api') || copiesChosen
        ? [...new Set<OurService>([...oursNeeded, 'read-api', 'projector'])]
        : oursNeeded,
    );
    if (o.eventLog === 'kafka') missing.push(...missingEntries(['relay']));
    if ((copiesChosen || rebuildPresets.length > 0) && !exists(rebuildEntry)) missing.push(rebuildEntry);
    if (missing.length > 0) {
      throw new Error(
        `our services are not built (missing ${missing.join(', ')}); run \`pnpm run build\` or pass --baselines-only`,
      );
    }
  }
  if (!o.baselinesOnly && oursNeeded.length > 0) {
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
  let storeFigures: StoreFigures = { kind: 'sqlite' };
  let mongo: RunningServer | undefined;
  const extraEnv: Record<string, string> = {};
  if (o.store === 'mongodb' && !o.baselinesOnly && oursNeeded.length > 0) {
    const started = await startMongoTier(join(runDir, 'data'), 'bench', log);
    mongo = started.server;
    storeFigures = started.figures;
    Object.assign(extraEnv, {
      EGGMESH_STORE: 'mongodb',
      EGGMESH_MONGODB_URI: started.server.uri,
      EGGMESH_MONGODB_DB: 'bench',
    });
  } else if (o.store === 'mongodb') {
    storeFigures = { kind: 'mongodb', server: serverName, note: mongoNote };
  }
  // --log kafka: a local broker (infra/kafka), the relay beside the projector, the projector on the topic.
  let kafka: RunningBroker | undefined;
  if (o.eventLog === 'kafka' && !o.baselinesOnly && oursNeeded.length > 0) {
    kafka = await startKafka({});
    log(`kafka: ${kafkaServerName} at ${kafka.brokers} (started in ${Math.round(kafka.startMs)} ms)`);
    Object.assign(extraEnv, {
      EGGMESH_LOG: 'kafka',
      EGGMESH_KAFKA_BROKERS: kafka.brokers,
      EGGMESH_KAFKA_TOPIC: 'eggmesh.bench',
    });
  }
  const stack = new Stack({
    extraEnv,
    relay: kafka !== undefined,
    dataDir: join(runDir, 'data'),
    logDir: join(runDir, 'logs'),
    bareDbFile: join(runDir, 'bare-rest.db'),
    dataset: { preset: o.preset, seed: o.seed, anchorMs },
    ...(profileDir ? { cpuProfileDir: profileDir } : {}),
    equippedBaselines: o.equippedBaselines,
  });

  // Projected copies of whole datasets, one per preset and run: the rebuild throughput and the scaling
  // curve's data. Each is generated first if missing, copied into the run directory and projected from
  // position 0 by rebuild.js, with nothing else running.
  const projectedCopies = new Map<PresetName, Promise<ProjectedData>>();
  const projected = (preset: PresetName): Promise<ProjectedData> => {
    let copy = projectedCopies.get(preset);
    if (!copy) {
      copy = (async () => {
        const ready = await ensureDataset(preset, o.seed, {
          ...(o.regenerate && preset === o.preset ? { force: true } : {}),
        });
        const dataDir = join(runDir, `projected-${preset}`, 'data');
        log(`${preset}: copying the dataset (${ready.manifest.head.toLocaleString('en-US')} log entries)`);
        cpSync(ready.dataDir, dataDir, { recursive: true });
        log(`${preset}: rebuilding projections from position 0 (rebuild.js --json)`);
        const rebuild = await runRebuild({
          preset,
          dataDir,
          logFile: join(runDir, `projected-${preset}`, 'rebuild.log'),
          cpuProfileDir: profileDir && join(profileDir, `rebuild-${preset}`),
        });
        rebuilds.push(rebuild);
        log(
          `${preset}: rebuilt ${rebuild.events.toLocaleString('en-US')} events in ${rebuild.seconds.toFixed(2)} s = ` +
            `${rebuild.eventsPerSecond.toLocaleString('en-US')} events/s (${rebuild.wallSeconds.toFixed(2)} s with process start)`,
        );
        const anchor = ready.manifest.anchorMs;
        return {
          preset,
          dataset: new Dataset({ preset: presets[preset], seed: o.seed, anchorMs: anchor }),
          dataDir,
          rebuild,
          stackOptions: {
            dataDir,
            logDir: join(runDir, `projected-${preset}`, 'logs'),
            bareDbFile: join(runDir, `projected-${preset}`, 'bare-rest.db'),
            dataset: { preset, seed: o.seed, anchorMs: anchor },
            ...(profileDir ? { cpuProfileDir: join(profileDir, `scaling-${preset}`) } : {}),
          },
        };
      })();
      projectedCopies.set(preset, copy);
    }
    return copy;
  };

  const stopOnSignal = () => {
    void stack.stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);

  const results: ScenarioResult[] = [];
  let failure: string | undefined;
  try {
    // Rebuild throughput first, while nothing else runs.
    for (const preset of rebuildPresets) await projected(preset);
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
      log(
        `${scenario.name}: ${wanted.length > 0 ? `starting ${wanted.join(', ')}` : 'stopping the run stack (the scenario starts its own servers)'}`,
      );
      await stack.ensure(wanted, scenario.ourLaunch);
      results.push(
        await scenario.run({
          plan: o.plan,
          dataset,
          stack,
          sides,
          rng: mulberry32(o.seed ^ 0xbe7c4),
          log,
          preset: o.preset,
          scalingLarge: o.scalingLarge,
          projected,
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
    await mongo?.stop();
    await kafka?.stop();
  }
  if (rebuilds.length > 0) setup.rebuilds = rebuilds;
  // Profiles are written as the processes exit, so only now.
  let profiles: ProfileSummary[] | undefined;
  if (profileDir) {
    profiles = summarizeProfilesIn(profileDir, { top: 25, root: repoRoot });
    log(`CPU profiles: ${profiles.length} in ${profileDir}`);
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
    ...(o.equippedBaselines ? { equippedBaselines: true } : {}),
    setup,
    store: storeFigures,
    ...(kafka ? { eventLog: { kind: 'kafka' as const, server: kafkaServerName } } : {}),
    scenarios: results,
    ...(profiles ? { profiles } : {}),
    ...(failure ? { failure } : {}),
  };
  const report: BenchReport = { ...partial, targets: judgeTargets(partial) };
  // A run of one scenario gets its name (and the scaling curve its large preset) in the file name.
  const only =
    chosen.length === 0
      ? '-rebuild'
      : chosen.length === 1
        ? `-${chosen[0]!.name}${scalingChosen ? `-${o.scalingLarge}` : ''}`
        : '';
  const suffix =
    (o.plan.quick ? '-quick' : o.preset === 'small' ? '' : `-${o.preset}`) +
    (o.store === 'mongodb' ? '-mongodb' : '') +
    (o.eventLog === 'kafka' ? '-kafka' : '') +
    only +
    (o.equippedBaselines ? '-equipped' : '') +
    (profileDir ? '-profiled' : '');
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
