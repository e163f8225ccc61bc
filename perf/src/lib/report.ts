import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DatasetCounts } from '../data/dataset.js';
import type { CaseResult, Plan, ScenarioResult } from '../scenarios/types.js';
import type { MachineFacts } from './env.js';
import { barChartSvg } from './svg.js';

export interface SetupFigures {
  /** The projector applying the whole generated log from position 0 (issue: rebuild throughput). */
  readonly projectorCatchUp?: {
    readonly events: number;
    /** From spawning the process to the last entry visible through the read-api. */
    readonly seconds: number;
    readonly eventsPerSecond: number;
    /** From the projector's first health answer on, by its own `/metrics` position (start-up excluded). */
    readonly steadyEventsPerSecond?: number;
  };
  /** Sampled projection documents compared with the generator's own arithmetic. */
  readonly projectionCheck?: { readonly documents: number; readonly ok: boolean };
  readonly generation?: {
    readonly seconds: number;
    readonly rowsPerSecond: number;
    readonly cached: boolean;
  };
}

export interface TargetCheck {
  readonly target: string;
  readonly value: number | null;
  readonly threshold: string;
  /** null: not measured (or quick mode, where timings are not judged). */
  readonly met: boolean | null;
  readonly note?: string;
}

export interface BenchReport {
  readonly schemaVersion: 1;
  readonly date: string;
  readonly commit: string;
  readonly machine: MachineFacts;
  readonly preset: string;
  readonly seed: number;
  readonly counts: DatasetCounts;
  readonly plan: Plan;
  readonly baselinesOnly: boolean;
  readonly setup: SetupFigures;
  readonly scenarios: readonly ScenarioResult[];
  readonly targets: readonly TargetCheck[];
  /** Why the run stopped early, if it did. */
  readonly failure?: string;
}

const findCase = (
  report: Pick<BenchReport, 'scenarios'>,
  scenario: string,
  name: string,
): CaseResult | undefined =>
  report.scenarios.find((s) => s.name === scenario)?.cases.find((c) => c.case === name);

const figure = (report: Pick<BenchReport, 'scenarios'>, scenario: string, name: string): number | undefined =>
  report.scenarios.find((s) => s.name === scenario)?.figures[name];

/** The issue's targets, judged from the measurements (never in quick mode). */
export function judgeTargets(report: Omit<BenchReport, 'targets'>): TargetCheck[] {
  const quick = report.plan.quick;
  const judge = (value: number | null | undefined, ok: (v: number) => boolean): boolean | null =>
    quick || value === null || value === undefined ? null : ok(value);
  const ratioOf = (scenario: string, name: string) => findCase(report, scenario, name)?.ratios.rps ?? null;
  const checks: TargetCheck[] = [];
  const add = (
    target: string,
    value: number | null | undefined,
    threshold: string,
    ok: (v: number) => boolean,
    note?: string,
  ) =>
    checks.push({
      target,
      value: value ?? null,
      threshold,
      met: judge(value, ok),
      ...(note ? { note } : {}),
    });
  add(
    'crud-sequence c=100 req/s ÷ bare Fastify+SQLite',
    ratioOf('crud-sequence', 'c=100'),
    '≥ 0.7',
    (v) => v >= 0.7,
  );
  add(
    'GraphQL getById req/s ÷ bare Mercurius',
    ratioOf('graphql-queries', 'farm getById'),
    '≥ 0.6',
    (v) => v >= 0.6,
  );
  add(
    'GraphQL getAll req/s ÷ bare Mercurius',
    ratioOf('graphql-queries', 'farm getAll'),
    '≥ 0.6',
    (v) => v >= 0.6,
  );
  add(
    'depth-3 p50 ÷ getById p50 (ours)',
    figure(report, 'federation-depth', 'ours_depth3_over_getById_p50'),
    '≤ 2',
    (v) => v <= 2,
  );
  add(
    'projector rebuild events/s',
    report.setup.projectorCatchUp?.steadyEventsPerSecond ?? report.setup.projectorCatchUp?.eventsPerSecond,
    '≥ 50,000',
    (v) => v >= 50_000,
    `on the ${report.preset} set`,
  );
  add(
    'projection lag p99 at half the max write rate (ms)',
    figure(report, 'mixed-workload', 'lag_p99_ms'),
    '< 100',
    (v) => v < 100,
  );
  checks.push({
    target: 'national getById / filtered p99 ÷ small',
    value: null,
    threshold: '≤ 2',
    met: null,
    note: 'scaling curve not measured by this harness yet',
  });
  return checks;
}

const n = (v: number | null | undefined, digits = 0): string =>
  v === null || v === undefined || !Number.isFinite(v)
    ? '–'
    : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const r = (v: number | null | undefined): string =>
  v === null || v === undefined ? '–' : `${v.toFixed(2)}×`;

export function renderMarkdown(
  report: BenchReport,
  charts: readonly { title: string; file: string }[],
): string {
  const m = report.machine;
  const c = report.counts;
  const p = report.plan;
  const lines: string[] = [
    `# eggmesh benchmark — ${report.date.slice(0, 10)}, ${report.commit}`,
    '',
    `- Machine: **${m.cores} cores** (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}; load average at start ${m.loadAverage.join(' / ')}. Client and servers share these cores, so compare ratios, not absolute numbers.`,
    `- Data: preset \`${report.preset}\` (seed ${report.seed}): ${n(c.farm)} farms, ${n(c.coop)} coops, ${n(c.hen)} hens, ${n(c.container)} containers, ${n(c.consumer)} consumers, ${n(c.events)} events.`,
    `- Method: autocannon, ${p.connections} connections unless the case says otherwise, no pipelining; per case and side a ${p.warmupSec} s warm-up (excluded), then ${p.runs} run(s) of ${p.durationSec} s alternating sides; medians reported. Server CPU from /proc utime+stime of the server processes.`,
  ];
  if (report.baselinesOnly)
    lines.push('- **Baselines only** (--baselines-only): our services were not measured.');
  if (p.quick)
    lines.push(
      '',
      '> Quick mode: a correctness smoke on tiny data. Timings below are not meaningful and no target is judged.',
    );
  if (report.failure) lines.push('', `> **Run stopped:** ${report.failure.replaceAll('\n', ' ')}`);
  lines.push(
    '',
    '## Throughput and p99 (ours ÷ baseline)',
    '',
    '| scenario | case | conns | ours req/s | baseline req/s | req/s ratio | ours p99 ms | baseline p99 ms | p99 ratio | ours CPU ms/req | baseline CPU ms/req |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const s of report.scenarios) {
    for (const k of s.cases) {
      lines.push(
        `| ${s.name} | ${k.case} | ${k.connections} | ${n(k.ours?.rps)} | ${n(k.baseline?.rps)} | ${r(k.ratios.rps)} | ${n(k.ours?.p99, 2)} | ${n(k.baseline?.p99, 2)} | ${r(k.ratios.p99)} | ${n(k.ours?.cpuMsPerRequest, 3)} | ${n(k.baseline?.cpuMsPerRequest, 3)} |`,
      );
    }
  }
  lines.push(
    '',
    '## Latency percentiles (ms)',
    '',
    '| scenario | case | ours p50 | ours p97.5 | ours p99 | baseline p50 | baseline p97.5 | baseline p99 | ours non-2xx / wrong / errors |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const s of report.scenarios) {
    for (const k of s.cases) {
      const o = k.ours;
      const b = k.baseline;
      lines.push(
        `| ${s.name} | ${k.case} | ${n(o?.p50, 2)} | ${n(o?.p97_5, 2)} | ${n(o?.p99, 2)} | ${n(b?.p50, 2)} | ${n(b?.p97_5, 2)} | ${n(b?.p99, 2)} | ${o ? `${o.non2xx} / ${o.wrong} / ${o.errors}` : '–'} |`,
      );
    }
  }
  lines.push('', '## Other figures', '');
  const su = report.setup;
  if (su.generation) {
    lines.push(
      `- Data generation: ${su.generation.cached ? 'cached dataset reused' : `${n(su.generation.rowsPerSecond)} rows/s, ${su.generation.seconds.toFixed(1)} s`}.`,
    );
  }
  if (su.projectorCatchUp) {
    const p = su.projectorCatchUp;
    lines.push(
      `- Projector from position 0 over the generated log: ${n(p.events)} entries in ${p.seconds.toFixed(2)} s = ${n(p.eventsPerSecond)} entries/s including process start` +
        (p.steadyEventsPerSecond === undefined
          ? ' (too few entries left after start-up for a steady rate).'
          : `; **${n(p.steadyEventsPerSecond)} entries/s** once running (its /metrics position).`),
    );
  }
  if (su.projectionCheck) {
    lines.push(
      `- Projection check after load: ${su.projectionCheck.documents} sampled documents, ${su.projectionCheck.ok ? 'all match' : 'MISMATCH'}.`,
    );
  }
  for (const s of report.scenarios) {
    for (const [key, value] of Object.entries(s.figures))
      lines.push(`- ${s.name} \`${key}\`: ${n(value, 2)}`);
  }
  lines.push(
    '',
    `## Targets (${m.cores} cores)`,
    '',
    '| target | value | threshold | met |',
    '|---|--:|---|---|',
  );
  for (const t of report.targets) {
    const met = t.met === null ? 'not judged' : t.met ? 'yes' : '**no**';
    lines.push(`| ${t.target} | ${n(t.value, 2)} | ${t.threshold} | ${met}${t.note ? ` (${t.note})` : ''} |`);
  }
  if (charts.length > 0) {
    lines.push('', '## Charts', '');
    for (const chart of charts) lines.push(`![${chart.title}](${chart.file})`, '');
  }
  lines.push('## Scenarios', '');
  for (const s of report.scenarios) {
    lines.push(`- **${s.name}**: ${s.description}${s.notes.length ? ` ${s.notes.join(' ')}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

const oursColor = '#1f77b4';
const baseColor = '#aaaaaa';

/** The report's charts: req/s per case, latency percentiles per case, ratios with the targets drawn in. */
export function renderCharts(report: BenchReport): { name: string; title: string; svg: string }[] {
  const cases = report.scenarios.flatMap((s) => s.cases.map((k) => ({ label: `${s.name}: ${k.case}`, k })));
  if (cases.length === 0) return [];
  const categories = cases.map((x) => x.label);
  return [
    {
      name: 'rps',
      title: 'Requests per second, ours vs baseline',
      svg: barChartSvg({
        title: `Requests/s — ours vs baseline (${report.machine.cores} cores, ${report.preset})`,
        unit: 'req/s',
        categories,
        series: [
          { name: 'ours', color: oursColor, values: cases.map((x) => x.k.ours?.rps ?? null) },
          { name: 'baseline', color: baseColor, values: cases.map((x) => x.k.baseline?.rps ?? null) },
        ],
      }),
    },
    {
      name: 'latency',
      title: 'Latency percentiles',
      svg: barChartSvg({
        title: 'Latency p50 / p97.5 / p99 (ms)',
        unit: 'ms',
        categories,
        series: [
          { name: 'ours p50', color: '#9ecae1', values: cases.map((x) => x.k.ours?.p50 ?? null) },
          { name: 'ours p97.5', color: '#4292c6', values: cases.map((x) => x.k.ours?.p97_5 ?? null) },
          { name: 'ours p99', color: '#08519c', values: cases.map((x) => x.k.ours?.p99 ?? null) },
          { name: 'baseline p50', color: '#e0e0e0', values: cases.map((x) => x.k.baseline?.p50 ?? null) },
          { name: 'baseline p97.5', color: '#bdbdbd', values: cases.map((x) => x.k.baseline?.p97_5 ?? null) },
          { name: 'baseline p99', color: '#737373', values: cases.map((x) => x.k.baseline?.p99 ?? null) },
        ],
      }),
    },
    {
      name: 'ratio',
      title: 'Ours ÷ baseline req/s',
      svg: barChartSvg({
        title: 'Ours ÷ baseline, req/s (targets: REST 0.7, GraphQL 0.6)',
        unit: 'ratio',
        categories,
        series: [{ name: 'ours ÷ baseline', color: oursColor, values: cases.map((x) => x.k.ratios.rps) }],
        references: [
          { value: 0.7, label: 'REST target' },
          { value: 0.6, label: 'GraphQL target' },
        ],
      }),
    },
  ];
}

/** Writes `<stem>.json`, `<stem>.md` and `<stem>-<chart>.svg` into `dir`; returns the paths. */
export function writeReport(dir: string, stem: string, report: BenchReport): string[] {
  mkdirSync(dir, { recursive: true });
  const charts = renderCharts(report);
  const written: string[] = [];
  const chartLinks = charts.map((chart) => {
    const file = `${stem}-${chart.name}.svg`;
    writeFileSync(join(dir, file), chart.svg);
    written.push(join(dir, file));
    return { title: chart.title, file };
  });
  writeFileSync(join(dir, `${stem}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(dir, `${stem}.md`), renderMarkdown(report, chartLinks));
  written.unshift(join(dir, `${stem}.json`), join(dir, `${stem}.md`));
  return written;
}
