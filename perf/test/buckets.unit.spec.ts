import { describe, expect, it } from 'vitest';
import { summarizeBuckets } from '../src/lib/projections.js';

const buckets = (entries: Array<[number, number]>) => new Map(entries);

describe('summarizeBuckets (the projector lag histogram between two scrapes)', () => {
  it('counts only what was observed between the scrapes, and bounds the percentiles by bucket', () => {
    const before = buckets([
      [0.01, 500],
      [0.05, 900],
      [0.1, 990],
      [Number.POSITIVE_INFINITY, 1000],
    ]);
    const after = buckets([
      [0.01, 620],
      [0.05, 1097],
      [0.1, 1189],
      [Number.POSITIVE_INFINITY, 1200],
    ]);
    // Between the scrapes, 200 entries: 120 within 10 ms, 197 within 50, 199 within 100, 1 beyond.
    const s = summarizeBuckets(before, after, 50)!;
    expect(s.count).toBe(200);
    expect(s.p50AtMostMs).toBe(10);
    // The 198th entry is past 50 ms: the p99 is only known to be within 100.
    expect(s.p99AtMostMs).toBe(100);
    expect(s.withinShare).toBeCloseTo(197 / 200, 10);
  });

  it('says nothing when nothing was observed', () => {
    const same = buckets([
      [0.05, 3],
      [Number.POSITIVE_INFINITY, 3],
    ]);
    expect(summarizeBuckets(same, same, 50)).toBeNull();
  });
});
