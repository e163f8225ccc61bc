import { describe, expect, it } from 'vitest';
import type { SideSummary } from '../src/lib/load.js';
import { parseRebuildOutput } from '../src/lib/rebuild.js';
import {
  type BenchReport,
  intervalNote,
  judgeTargets,
  latencyMarkdown,
  renderCharts,
  renderMarkdown,
  worstScaling,
} from '../src/lib/report.js';
import type { LatencyCell, LatencyResult } from '../src/scenarios/latency.js';
import type { ScalingQuery, ScalingResult } from '../src/scenarios/types.js';
import { smallCounts, testMachine } from './report-fixture.js';

const summary = (p50: number, p99: number, rps = 1_000): SideSummary => ({
  rps,
  p50,
  p97_5: p99,
  p99,
  cpuMsPerRequest: 0.1,
  requests: rps,
  non2xx: 0,
  wrong: 0,
  errors: 0,
  runs: [],
});

const query = (name: string, kind: ScalingQuery['kind'], small: number, large: number): ScalingQuery => ({
  name,
  kind,
  points: [
    { preset: 'small', rows: 36_900, summary: summary(small / 3, small) },
    { preset: 'national', rows: 7_441_890, summary: summary(large / 3, large) },
  ],
  p99Ratio: large / small,
  p50Ratio: large / small,
  rpsRatio: small / large,
});

const curve = (large: 'national' | 'medium'): ScalingResult => ({
  small: 'small',
  large,
  connections: 100,
  queries: [
    query('farm getById', 'getById', 10, 12),
    query('hen getById', 'getById', 10, 15),
    query('coop getByFarm', 'filtered', 10, 25),
    query('hen getByCoop', 'filtered', 10, 11),
    query('depth 3 (farm→coops→hens)', 'depth3', 10, 40),
  ],
});

function report(large: 'national' | 'medium', quick = false): Omit<BenchReport, 'targets'> {
  return {
    schemaVersion: 1,
    date: '2026-01-02T03:04:05.000Z',
    commit: 'abc1234',
    machine: testMachine,
    preset: 'small',
    seed: 1,
    counts: smallCounts,
    plan: { runs: 3, durationSec: 10, warmupSec: 3, connections: 100, quick },
    baselinesOnly: false,
    setup: {
      rebuilds: [
        { preset: 'medium', events: 738_000, seconds: 30, eventsPerSecond: 24_600, wallSeconds: 31 },
        { preset: 'national', events: 7_441_890, seconds: 140, eventsPerSecond: 53_156, wallSeconds: 141 },
      ],
    },
    scenarios: [
      {
        name: 'scaling',
        description: 'scaling',
        cases: [],
        figures: {},
        notes: [],
        scaling: curve(large),
      },
    ],
  };
}

describe('worstScaling', () => {
  it('takes the largest p99 ratio of a kind', () => {
    expect(worstScaling(curve('national'), 'getById')).toEqual({ value: 1.5, query: 'hen getById' });
    expect(worstScaling(curve('national'), 'filtered')).toEqual({ value: 2.5, query: 'coop getByFarm' });
  });
});

describe('judgeTargets', () => {
  it('judges the scaling targets on national and the rebuild on each of medium and national', () => {
    const targets = judgeTargets(report('national'));
    const by = (prefix: string) => targets.find((t) => t.target.startsWith(prefix));
    expect(by('national getById')).toMatchObject({ value: 1.5, met: true });
    expect(by('national filtered')).toMatchObject({ value: 2.5, met: false });
    expect(by('projector rebuild events/s (medium)')).toMatchObject({ value: 24_600, met: false });
    expect(by('projector rebuild events/s (national)')).toMatchObject({ value: 53_156, met: true });
  });

  it('judges the depth-3 tree by its req/s against bare Mercurius, at least half of it', () => {
    const depth3 = (rpsRatio: number) =>
      judgeTargets({
        ...report('national'),
        scenarios: [
          {
            name: 'federation-depth',
            description: 'depth',
            cases: [
              {
                scenario: 'federation-depth',
                case: 'depth 3 (farm→coops→hens)',
                connections: 100,
                ours: summary(14, 29, 6_000 * rpsRatio),
                baseline: summary(8, 20, 6_000),
                ratios: { rps: rpsRatio, p99: 1.4, cpuMsPerRequest: 1.8 },
              },
            ],
            figures: {},
            notes: [],
          },
        ],
      }).find((t) => t.target.startsWith('GraphQL depth 3'));
    expect(depth3(0.59)).toMatchObject({ value: 0.59, threshold: '≥ 0.5', met: true });
    expect(depth3(0.45)).toMatchObject({ value: 0.45, met: false });
  });

  it('reports but does not judge a curve whose large end is not national, nor anything in quick mode', () => {
    const medium = judgeTargets(report('medium'));
    expect(medium.find((t) => t.target.startsWith('medium getById'))).toMatchObject({
      value: 1.5,
      met: null,
    });
    expect(judgeTargets(report('national', true)).every((t) => t.met === null)).toBe(true);
  });
});

describe('renderMarkdown and renderCharts', () => {
  const full: BenchReport = { ...report('national'), targets: judgeTargets(report('national')) };

  it('has a scaling table, a rebuild table and the verdicts', () => {
    const md = renderMarkdown(full, []);
    expect(md).toContain('## Scaling curve');
    expect(md).toMatch(/\| coop getByFarm \| filtered \| .* \| 2\.50× \| .* \| \*\*no\*\* \|/);
    expect(md).toMatch(/\| hen getById \| getById \| .* \| 1\.50× \| .* \| yes \|/);
    expect(md).toContain('## Projector rebuild throughput');
    expect(md).toContain('| national | 7,441,890 | 140.00 | **53,156** |');
    // Scaling cases have no baseline: they stay out of the ours-vs-baseline tables.
    expect(md).not.toContain('| scaling |');
  });

  it('draws the scaling curve and its ratios', () => {
    const names = renderCharts(full).map((c) => c.name);
    expect(names).toEqual(['scaling', 'scaling-ratio']);
    const svg = renderCharts(full)[0]!.svg;
    expect(svg).toContain('national p99');
    expect(svg).toContain('small p50');
  });
});

describe('parseRebuildOutput', () => {
  it('reads the JSON summary line of rebuild.js --json', () => {
    const out =
      'some log\n{"generation":"g2","events":538000,"seconds":24.5,"eventsPerSecond":21959,"removed":[]}\n';
    expect(parseRebuildOutput(out)).toEqual({ events: 538_000, seconds: 24.5, eventsPerSecond: 21_959 });
  });

  it('takes the peak RSS when the rebuild reports it', () => {
    const out =
      '{"generation":"g2","events":10,"seconds":1,"eventsPerSecond":10,"peakRssMiB":3912,"removed":[]}\n';
    expect(parseRebuildOutput(out)).toEqual({
      events: 10,
      seconds: 1,
      eventsPerSecond: 10,
      peakRssMiB: 3912,
    });
  });

  it('refuses output without a summary', () => {
    expect(() => parseRebuildOutput('rebuilt 5 events')).toThrow(/no JSON summary/);
  });
});

describe('the latency targets and their bootstrap intervals', () => {
  const cell = (target: LatencyCell['target'], clients: number, kind: string, p95: number): LatencyCell => ({
    target,
    clients,
    kind,
    count: 40,
    p50: p95 / 2,
    p95,
    p99: p95 * 1.2,
  });
  const latency: LatencyResult = {
    thinkMs: 500,
    secondsPerRun: 30,
    runs: 3,
    cpu: [],
    loaded: [],
    cells: [1, 10].flatMap((clients) => [
      cell('direct', clients, 'graphql (all)', 2),
      cell('direct', clients, 'rest (all)', 4),
      cell('front-door', clients, 'graphql (all)', 2.1),
      cell('front-door', clients, 'rest (all)', 5),
    ]),
    intervals: [
      { door: 'front-door', clients: 1, api: 'graphql', low: 0.8, high: 1.1, level: 0.9 },
      { door: 'front-door', clients: 1, api: 'rest', low: 1.2, high: 1.5, level: 0.9 },
      { door: 'front-door', clients: 10, api: 'graphql', low: 0.9, high: 1.3, level: 0.9 },
    ],
  };
  const withLatency: Omit<BenchReport, 'targets'> = {
    ...report('national'),
    scenarios: [{ name: 'latency', description: 'latency', cases: [], figures: {}, notes: [], latency }],
  };

  it('judges no front door against a latency limit: what a hop costs is reported, not a target', () => {
    const targets = judgeTargets(withLatency);
    expect(targets.filter((t) => /front-door|HAProxy|front door/.test(t.target))).toEqual([]);
  });

  it('lists the intervals under the latency table', () => {
    const text = latencyMarkdown(latency).join('\n');
    expect(text).toContain('| 1 | REST | public port | 1.25× | 90 %: 1.20–1.50 |');
    expect(text).toContain('| 10 | GraphQL | public port | 1.05× | 90 %: 0.90–1.30 |');
    expect(latencyMarkdown({ ...latency, intervals: [] }).join('\n')).not.toContain('bootstrap');
  });

  it('classifies an interval that touches the limit as met', () => {
    const atMost = (v: number) => v <= 1.15;
    expect(intervalNote({ low: 1, high: 1.15, level: 0.9 }, '10 and 20', atMost)).toMatch(/: met across it$/);
    expect(intervalNote({ low: 1.16, high: 2, level: 0.5 }, '10 and 20', atMost)).toBe(
      '50 % bootstrap interval 1.16–2.00 over 10 and 20 samples: missed across it',
    );
  });
});

describe('the client-seen lag target and its bootstrap interval', () => {
  const withLag = (figures: Record<string, number>): Omit<BenchReport, 'targets'> => ({
    ...report('national'),
    scenarios: [{ name: 'mixed-workload', description: 'mixed', cases: [], figures, notes: [] }],
  });
  const lagTarget = (figures: Record<string, number>) =>
    judgeTargets(withLag(figures)).find((t) => t.target.includes('seen by a client'));

  it('says whether the interval settles the verdict, beside the wait for the projections', () => {
    const across = lagTarget({
      lag_p99_ms: 42.3,
      lag_p99_low_ms: 38.04,
      lag_p99_high_ms: 47.96,
      lag_samples: 959,
      lag_wait_p99_ms: 6.7,
    });
    expect(across).toMatchObject({ value: 42.3, met: true });
    expect(across?.note).toBe(
      '90 % bootstrap interval 38.0–48.0 over 959 samples: met across it; ' +
        "of it, the read-api waited for the projections: p99 6.7 ms (server-timing); the rest is the read's own trip through a loaded read-api",
    );
    const inside = lagTarget({ lag_p99_ms: 48, lag_p99_low_ms: 44, lag_p99_high_ms: 55, lag_samples: 900 });
    expect(inside).toMatchObject({ value: 48, met: true });
    expect(inside?.note).toMatch(/44\.0–55\.0 over 900 samples: the limit lies inside it/);
    // The target is strict (< 50): an interval ending at 50 is not met across it.
    expect(
      lagTarget({ lag_p99_ms: 45, lag_p99_low_ms: 40, lag_p99_high_ms: 50, lag_samples: 900 })?.note,
    ).toMatch(/the limit lies inside it/);
    expect(
      lagTarget({ lag_p99_ms: 60, lag_p99_low_ms: 52, lag_p99_high_ms: 70, lag_samples: 900 }),
    ).toMatchObject({ met: false, note: expect.stringMatching(/: missed across it$/) });
  });

  it('keeps the verdict alone for a report without the interval', () => {
    const alone = lagTarget({ lag_p99_ms: 51.6 });
    expect(alone).toMatchObject({ value: 51.6, met: false });
    expect(alone?.note).toBeUndefined();
  });
});
