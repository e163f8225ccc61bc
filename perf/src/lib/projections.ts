import { setTimeout as sleep } from 'node:timers/promises';
import type { Dataset } from '../data/dataset.js';
import { queries } from '../scenarios/queries.js';
import { checkEqual, GateError, graphql } from './gate.js';

type Doc = Record<string, unknown>;

/**
 * Waits until the read-api shows the projection of the generated log's last entry (the final lay
 * report's hen total), so every earlier entry has been applied. Returns the seconds waited.
 */
export async function waitForProjections(readApi: string, dataset: Dataset, head: number, timeoutMs: number) {
  const probe = dataset.finalProbe();
  const started = performance.now();
  let last = 'no answer yet';
  while (performance.now() - started < timeoutMs) {
    try {
      const data = await graphql(
        `${readApi}/hen_productivity/graph`,
        queries.henProductivityByHen,
        { id: probe.henId },
        { 'x-min-position': String(head) },
      );
      const docs = data.getByHen as Doc[] | null;
      if (docs?.[0]?.total_eggs === probe.totalEggs) return (performance.now() - started) / 1000;
      last = JSON.stringify(docs);
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(50);
  }
  throw new GateError(
    `projections did not reach position ${head} within ${timeoutMs} ms (last answer: ${last})`,
  );
}

/** Compares sampled projection documents with what the generator's arithmetic says they must be. */
export async function checkProjections(readApi: string, dataset: Dataset): Promise<number> {
  const c = dataset.counts;
  const sample = (count: number, extra: number[] = []) => [
    ...new Set([0, count - 1, Math.floor(count / 2), ...extra]),
  ];
  let documents = 0;
  for (const h of sample(c.hen, [dataset.finalProbe().henIndex])) {
    const want = dataset.henProductivity(h);
    const data = await graphql(`${readApi}/hen_productivity/graph`, queries.henProductivityByHen, {
      id: want.hen_id,
    });
    const doc = (data.getByHen as Doc[] | null)?.[0];
    checkEqual(
      doc && { hen_id: doc.hen_id, farm_id: doc.farm_id, total_eggs: doc.total_eggs },
      { hen_id: want.hen_id, farm_id: want.farm_id, total_eggs: want.total_eggs },
      `hen_productivity of hen ${h}`,
    );
    // The projector may round the rate (4 decimals at the time of writing).
    if (!(Math.abs((doc?.quality_rate as number) - want.quality_rate) <= 5e-5)) {
      throw new GateError(
        `hen_productivity of hen ${h}: quality_rate ${String(doc?.quality_rate)}, expected ${want.quality_rate}`,
      );
    }
    documents++;
  }
  for (const f of sample(c.farm)) {
    const want = dataset.farmOutput(f);
    const data = await graphql(`${readApi}/farm_output/graph`, queries.farmOutputByFarm, {
      id: want.farm_id,
    });
    const doc = (data.getByFarm as Doc[] | null)?.[0];
    checkEqual(
      doc && {
        farm_id: doc.farm_id,
        farm_type: doc.farm_type,
        total_hens: doc.total_hens,
        active_hens: doc.active_hens,
      },
      want,
      `farm_output of farm ${f}`,
    );
    documents++;
  }
  const containers = sample(c.container);
  const deposits = dataset.depositTotals(containers);
  for (const k of containers) {
    const id = dataset.id('container', k);
    const data = await graphql(`${readApi}/container_inventory/graph`, queries.inventoryByContainer, { id });
    const doc = (data.getByContainer as Doc[] | null)?.[0];
    checkEqual(doc?.total_deposits, deposits.get(k), `container_inventory.total_deposits of container ${k}`);
    documents++;
  }
  return documents;
}

/** One gauge or counter from a Prometheus text endpoint (e.g. the projector's `/metrics`), or null. */
export async function metricValue(url: string, name: string): Promise<number | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    const text = await response.text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    const value = line ? Number(line.slice(name.length + 1)) : Number.NaN;
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

/** A Prometheus histogram's cumulative bucket counts by upper bound (s; `+Inf` as Infinity), or null. */
export async function histogramBuckets(url: string, name: string): Promise<Map<number, number> | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    const text = await response.text();
    const buckets = new Map<number, number>();
    const prefix = `${name}_bucket{`;
    for (const line of text.split('\n')) {
      if (!line.startsWith(prefix)) continue;
      const match = /le="([^"]+)"[^}]*\}\s+(\S+)/.exec(line);
      if (!match) continue;
      buckets.set(match[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match[1]), Number(match[2]));
    }
    return buckets.size > 0 ? buckets : null;
  } catch {
    return null;
  }
}

/** What a histogram's buckets say about the observations between two scrapes. */
export interface BucketSummary {
  readonly count: number;
  /** The upper bound (ms) of the bucket holding the median and the 99th percentile: "at most". */
  readonly p50AtMostMs: number;
  readonly p99AtMostMs: number;
  /** The share of observations at or below `withinMs`. */
  readonly withinShare: number;
  readonly withinMs: number;
}

/** The observations between `before` and `after` (cumulative buckets in seconds), in ms. */
export function summarizeBuckets(
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
  withinMs: number,
): BucketSummary | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const count = counts[counts.length - 1] ?? 0;
  if (count <= 0) return null;
  const atMost = (q: number) => {
    const i = counts.findIndex((c) => c >= q * count);
    return bounds[i]! * 1000;
  };
  const within = bounds.findIndex((b) => b * 1000 >= withinMs);
  const withinCount = within >= 0 && bounds[within]! * 1000 === withinMs ? counts[within]! : Number.NaN;
  return {
    count,
    p50AtMostMs: atMost(0.5),
    p99AtMostMs: atMost(0.99),
    withinShare: withinCount / count,
    withinMs,
  };
}
