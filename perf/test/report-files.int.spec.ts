import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type BenchReport, writeReport } from '../src/lib/report.js';
import { smallCounts, testMachine } from './report-fixture.js';

const report = (commit: string): BenchReport => ({
  schemaVersion: 1,
  date: '2026-01-02T03:04:05.000Z',
  commit,
  machine: testMachine,
  preset: 'small',
  seed: 1,
  counts: smallCounts,
  plan: { runs: 1, durationSec: 1, warmupSec: 0, connections: 1, quick: false },
  baselinesOnly: false,
  setup: {},
  scenarios: [],
  targets: [],
});

describe('writeReport', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps an earlier report of the same name: the next run of it becomes -run2, then -run3', () => {
    dir = mkdtempSync(join(tmpdir(), 'eggmesh-report-files-'));
    const first = writeReport(dir, '2026-01-02-abc1234-latency', report('first'));
    const second = writeReport(dir, '2026-01-02-abc1234-latency', report('second'));
    const third = writeReport(dir, '2026-01-02-abc1234-latency', report('third'));
    expect(first.slice(0, 2)).toEqual([
      join(dir, '2026-01-02-abc1234-latency.json'),
      join(dir, '2026-01-02-abc1234-latency.md'),
    ]);
    expect(second.slice(0, 2)).toEqual([
      join(dir, '2026-01-02-abc1234-latency-run2.json'),
      join(dir, '2026-01-02-abc1234-latency-run2.md'),
    ]);
    expect(third[0]).toBe(join(dir, '2026-01-02-abc1234-latency-run3.json'));
    const commitOf = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as BenchReport).commit;
    expect(commitOf(first[0]!)).toBe('first');
    expect(commitOf(second[0]!)).toBe('second');
    expect(commitOf(third[0]!)).toBe('third');
    expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(3);
  });
});
