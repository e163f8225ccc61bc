/** Median of a non-empty list (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The p-th percentile (0..100) of values already sorted ascending, by the nearest-rank method
 * (the smallest value with at least p% of the samples at or below it), as HdrHistogram reports.
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (p <= 0) return sorted[0]!;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

export interface LatencySummary {
  readonly count: number;
  readonly mean: number;
  readonly p50: number;
  readonly p95: number;
  readonly p97_5: number;
  readonly p99: number;
  readonly max: number;
}

/** Summarises latency samples (ms). Sorts a copy. */
export function summarizeLatencies(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    p50: percentileOfSorted(sorted, 50),
    p95: percentileOfSorted(sorted, 95),
    p97_5: percentileOfSorted(sorted, 97.5),
    p99: percentileOfSorted(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
  };
}

/** ours ÷ baseline, or null when either side is missing or the baseline is zero. */
export function ratio(ours: number | undefined, baseline: number | undefined): number | null {
  if (ours === undefined || baseline === undefined) return null;
  if (!Number.isFinite(ours) || !Number.isFinite(baseline) || baseline === 0) return null;
  return ours / baseline;
}

/** A growable Float64 buffer: latency samples without per-sample allocation. */
export class SampleBuffer {
  #data = new Float64Array(4096);
  #length = 0;

  push(value: number): void {
    if (this.#length === this.#data.length) {
      const bigger = new Float64Array(this.#data.length * 2);
      bigger.set(this.#data);
      this.#data = bigger;
    }
    this.#data[this.#length++] = value;
  }

  get length(): number {
    return this.#length;
  }

  values(): Float64Array {
    return this.#data.subarray(0, this.#length);
  }
}

/** A range of plausible values of a figure: `low` and `high` bound the middle `level` of its resamples. */
export interface Interval {
  readonly low: number;
  readonly high: number;
  readonly level: number;
}

/** Resamples per bootstrap interval (the default of `percentileRatioInterval`). */
export const BOOTSTRAP_DRAWS = 2000;

/** The `p`-th percentile of a resample of `from` (as many draws, with replacement), drawn into `into`. */
function resampledPercentile(from: ArrayLike<number>, into: Float64Array, p: number, next: () => number) {
  for (let i = 0; i < into.length; i++) into[i] = from[Math.floor(next() * from.length)]!;
  return percentileOfSorted(into.sort(), p);
}

/** The middle `level` of `draws` values of `statistic`, each from a fresh resample. */
function bootstrap(draws: number, level: number, statistic: () => number): Interval {
  const values = new Float64Array(draws);
  for (let d = 0; d < draws; d++) values[d] = statistic();
  values.sort();
  const tail = ((1 - level) / 2) * 100;
  return { low: percentileOfSorted(values, tail), high: percentileOfSorted(values, 100 - tail), level };
}

/**
 * How far the ratio of two percentiles (`p`-th of `a` ÷ `p`-th of `b`) moves with the samples it rests
 * on: a percentile bootstrap. Each of `draws` rounds draws `a.length` samples from `a` and `b.length` from
 * `b`, with replacement, and takes the ratio of their percentiles; the interval is the middle `level`
 * (default 90 %) of those ratios. A p95 of 40 samples is the third highest of them, so two runs of the same
 * code can put the same ratio on either side of a limit such as 1.15: the interval says how much of a
 * verdict the samples carry. `next` gives uniform numbers in [0, 1) (a seeded generator
 * for repeatable reports). Null when either side has no samples or `b`'s percentile is not positive in the
 * samples themselves.
 */
export function percentileRatioInterval(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  p: number,
  next: () => number,
  draws = BOOTSTRAP_DRAWS,
  level = 0.9,
): Interval | null {
  if (a.length === 0 || b.length === 0) return null;
  if (!(percentileOfSorted(Float64Array.from(b).sort(), p) > 0)) return null;
  const da = new Float64Array(a.length);
  const db = new Float64Array(b.length);
  return bootstrap(draws, level, () => {
    const below = resampledPercentile(b, db, p, next);
    // A resample of `b` can be all zeros only when `b` holds zeros: such a draw says "unbounded".
    return below > 0 ? resampledPercentile(a, da, p, next) / below : Number.POSITIVE_INFINITY;
  });
}

/**
 * How far one percentile of `a` moves with its samples: the same bootstrap for a figure judged on its
 * own (the mixed workload's client-seen lag p99, which moves by several ms from run to run around its
 * 50 ms target). Null without samples.
 */
export function percentileInterval(
  a: ArrayLike<number>,
  p: number,
  next: () => number,
  draws = BOOTSTRAP_DRAWS,
  level = 0.9,
): Interval | null {
  if (a.length === 0) return null;
  const into = new Float64Array(a.length);
  return bootstrap(draws, level, () => resampledPercentile(a, into, p, next));
}
