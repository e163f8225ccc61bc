import { describe, expect, it } from 'vitest';
import { CPU_BOUND_MS } from '../../infra/test/patience.js';
import { mulberry32 } from '../src/data/prng.js';
import { parseStatTicks } from '../src/lib/proc.js';
import { formatDuration, progressLine } from '../src/lib/progress.js';
import {
  median,
  percentileInterval,
  percentileOfSorted,
  percentileRatioInterval,
  ratio,
  SampleBuffer,
  summarizeLatencies,
} from '../src/lib/stats.js';

describe('median', () => {
  it('takes the middle value of an odd count and the mean of the two middles of an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('does not reorder its input', () => {
    const input = [3, 1, 2];
    median(input);
    expect(input).toEqual([3, 1, 2]);
  });

  it('refuses an empty list', () => {
    expect(() => median([])).toThrow();
  });
});

describe('percentileOfSorted (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('returns the smallest value with at least p% of samples at or below it', () => {
    expect(percentileOfSorted(hundred, 50)).toBe(50);
    expect(percentileOfSorted(hundred, 97.5)).toBe(98);
    expect(percentileOfSorted(hundred, 99)).toBe(99);
    expect(percentileOfSorted(hundred, 100)).toBe(100);
    expect(percentileOfSorted(hundred, 0)).toBe(1);
  });

  it('handles tiny samples and empty input', () => {
    expect(percentileOfSorted([5], 99)).toBe(5);
    expect(percentileOfSorted([1, 2], 50)).toBe(1);
    expect(percentileOfSorted([], 50)).toBeNaN();
  });
});

describe('summarizeLatencies', () => {
  it('summarises unsorted sub-millisecond samples exactly', () => {
    const s = summarizeLatencies([0.3, 0.1, 0.2, 0.4]);
    expect(s).toEqual({ count: 4, mean: 0.25, p50: 0.2, p95: 0.4, p97_5: 0.4, p99: 0.4, max: 0.4 });
  });
});

describe('ratio', () => {
  it('divides ours by the baseline and gives null when it cannot', () => {
    expect(ratio(7, 10)).toBeCloseTo(0.7);
    expect(ratio(undefined, 10)).toBeNull();
    expect(ratio(1, 0)).toBeNull();
    expect(ratio(Number.NaN, 1)).toBeNull();
  });
});

describe('SampleBuffer', () => {
  it('grows past its initial capacity and keeps every value', () => {
    const b = new SampleBuffer();
    for (let i = 0; i < 10_000; i++) b.push(i);
    expect(b.length).toBe(10_000);
    expect(b.values()[9_999]).toBe(9_999);
    expect(b.values().length).toBe(10_000);
  });
});

describe('parseStatTicks', () => {
  it('adds utime and stime (fields 14 and 15), even when the command name has spaces and parentheses', () => {
    const stat = '4242 (node (x) y) S 1 4242 4242 0 -1 4194560 500 0 0 0 1234 567 0 0 20 0 11 0 100 0 0';
    expect(parseStatTicks(stat)).toBe(1234 + 567);
  });
});

describe('progress line', () => {
  it('shows percentage, counts, rate and an ETA', () => {
    const line = progressLine('small', 50_000, 100_000, 2);
    expect(line).toContain('50.0%');
    expect(line).toContain('50,000/100,000 rows');
    expect(line).toContain('25,000 rows/s');
    expect(line).toContain('ETA 2.0s');
  });

  it('formats durations in s, m and h', () => {
    expect(formatDuration(5.25)).toBe('5.3s');
    expect(formatDuration(125)).toBe('2m05s');
    expect(formatDuration(7_260)).toBe('2h01m');
  });
});

describe('percentileRatioInterval (bootstrap of a p95 ratio)', () => {
  const seeded = (seed: number) => mulberry32(seed).next;
  // Latency-like samples: a skewed spread from 1 to about 6 ms, in a fixed order.
  const sample = (n: number, seed: number, scale = 1) => {
    const next = seeded(seed);
    return Array.from({ length: n }, () => scale * (1 + 5 * next() ** 3));
  };

  it('straddles 1 for two samples of one distribution, and moves with the point ratio', () => {
    const a = sample(200, 1);
    const b = sample(200, 2);
    const point =
      percentileOfSorted(
        [...a].sort((x, y) => x - y),
        95,
      ) /
      percentileOfSorted(
        [...b].sort((x, y) => x - y),
        95,
      );
    const interval = percentileRatioInterval(a, b, 95, seeded(7))!;
    expect(interval.level).toBe(0.9);
    expect(interval.low).toBeLessThan(1);
    expect(interval.high).toBeGreaterThan(1);
    expect(interval.low).toBeLessThanOrEqual(point);
    expect(interval.high).toBeGreaterThanOrEqual(point);
  });

  it('excludes 1 when one side is twice the other', () => {
    const b = sample(300, 3);
    const a = sample(300, 4, 2);
    const interval = percentileRatioInterval(a, b, 95, seeded(7))!;
    expect(interval.low).toBeGreaterThan(1.3);
    expect(interval.high).toBeLessThan(3);
  });

  it('narrows as the samples grow', { timeout: CPU_BOUND_MS }, () => {
    const width = (n: number) => {
      const interval = percentileRatioInterval(sample(n, 5), sample(n, 6), 95, seeded(7))!;
      return interval.high - interval.low;
    };
    expect(width(2000)).toBeLessThan(width(40) / 2);
  });

  it('is the same for the same seed, and its level is the share of draws inside', () => {
    const a = sample(80, 8);
    const b = sample(80, 9);
    expect(percentileRatioInterval(a, b, 95, seeded(3))).toEqual(
      percentileRatioInterval(a, b, 95, seeded(3)),
    );
    const wide = percentileRatioInterval(a, b, 95, seeded(3), 2000, 0.98)!;
    const narrow = percentileRatioInterval(a, b, 95, seeded(3), 2000, 0.5)!;
    expect(wide.low).toBeLessThan(narrow.low);
    expect(wide.high).toBeGreaterThan(narrow.high);
  });

  it('is null without samples or with a zero percentile below', () => {
    expect(percentileRatioInterval([], [1, 2], 95, seeded(1))).toBeNull();
    expect(percentileRatioInterval([1, 2], [], 95, seeded(1))).toBeNull();
    expect(percentileRatioInterval([1, 2], [0, 0, 0], 95, seeded(1))).toBeNull();
  });
});

describe('percentileInterval (bootstrap of one p99)', () => {
  const seeded = (seed: number) => mulberry32(seed).next;
  const sample = (n: number, seed: number) => {
    const next = seeded(seed);
    return Array.from({ length: n }, () => 5 + 40 * next() ** 4);
  };

  it('holds the point p99 and lies within the samples', () => {
    const a = sample(1000, 11);
    const sorted = [...a].sort((x, y) => x - y);
    const point = percentileOfSorted(sorted, 99);
    const interval = percentileInterval(a, 99, seeded(1))!;
    expect(interval.level).toBe(0.9);
    expect(interval.low).toBeLessThanOrEqual(point);
    expect(interval.high).toBeGreaterThanOrEqual(point);
    expect(interval.low).toBeLessThan(interval.high);
    expect(interval.low).toBeGreaterThanOrEqual(sorted[0]!);
    expect(interval.high).toBeLessThanOrEqual(sorted[sorted.length - 1]!);
  });

  it('narrows as the samples grow, and repeats for the same seed', { timeout: CPU_BOUND_MS }, () => {
    const width = (n: number) => {
      const interval = percentileInterval(sample(n, 12), 99, seeded(2))!;
      return interval.high - interval.low;
    };
    expect(width(20_000)).toBeLessThan(width(300) / 2);
    const a = sample(500, 13);
    expect(percentileInterval(a, 99, seeded(4))).toEqual(percentileInterval(a, 99, seeded(4)));
  });

  it('is null without samples, and a point for samples all alike', () => {
    expect(percentileInterval([], 99, seeded(1))).toBeNull();
    expect(percentileInterval([7, 7, 7], 99, seeded(1))).toEqual({ low: 7, high: 7, level: 0.9 });
  });
});
