import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertClean, runLoad } from '../lib/load.js';
import type { OurService } from '../lib/stack.js';
import { median } from '../lib/stats.js';
import { readerSteps, writerSteps } from './mixed-workload.js';
import type { Scenario, ScenarioResult } from './types.js';

/** Resident set size of a process in MiB (VmRSS of /proc/<pid>/status), NaN when it is gone. */
export function rssMiB(pid: number): number {
  try {
    return parseVmRss(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/** VmRSS of a /proc/<pid>/status text, in MiB. */
export function parseVmRss(status: string): number {
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return kb ? Number(kb[1]) / 1024 : Number.NaN;
}

export interface RssCurve {
  readonly service: string;
  /** Seconds since the load started, and MiB. */
  readonly points: readonly (readonly [number, number])[];
  readonly idleBeforeMiB: number;
  readonly idleAfterMiB: number;
  readonly maxMiB: number;
  /** Median of the middle and of the last third of the samples under load. */
  readonly middleMiB: number;
  readonly lastMiB: number;
  /** Least-squares slope over the second half of the load, MiB per minute. */
  readonly slopeMiBPerMin: number;
  /**
   * The last SETTLE_S seconds of samples stay within SETTLE_BAND_MIB of each other: the process
   * reached its size (a cache filled up) and stopped there.
   */
  readonly settled: boolean;
  /**
   * The last third of the samples peaks at most RETURN_SLACK_MIB above the middle third's highest
   * sample and falls back at least to the middle third's median: a garbage collector's sawtooth whose
   * peaks do not climb, whichever phase the run ends in. Under a leak the peaks climb with it.
   */
  readonly returning: boolean;
  /**
   * Settled, returning, or the last third sits at most 10% (+ 8 MiB) above the middle one and the late
   * slope is under 2 MiB/min; a curve shorter than a minute is not judged (true).
   */
  readonly bounded: boolean;
}

export interface SoakResult {
  readonly seconds: number;
  readonly sampleEverySec: number;
  readonly writeRate: number;
  readonly readRate: number;
  readonly requests: number;
  readonly curves: readonly RssCurve[];
  readonly idleBeforeTotalMiB: number;
  readonly idleAfterTotalMiB: number;
}

/** What a curve's judgement says, in the order it is checked: the first that holds. */
export type CurveVerdict = 'settled' | 'falls back' | 'bounded' | 'growing';

export const curveVerdict = (c: RssCurve): CurveVerdict =>
  c.settled ? 'settled' : c.returning ? 'falls back' : c.bounded ? 'bounded' : 'growing';

/** Slope (y per x) of the least-squares line through the points. */
export function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  for (const [x, y] of points) {
    sx += x;
    sy += y;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** How long the end of a curve must stay flat, and how flat, to count as settled. */
const SETTLE_S = 120;
const SETTLE_BAND_MIB = 2;
/**
 * How far above the middle third's highest sample the last third's may peak and still count as
 * falling back: a garbage collector's sawtooth (climbing ~90 MiB and falling back several times in ten
 * minutes) that ends on a climb has a late slope above 2 MiB/min, and the slope rule alone would call it
 * growing.
 */
const RETURN_SLACK_MIB = 8;

/** Judges one process's curve under load. */
export function judgeCurve(
  service: string,
  points: readonly (readonly [number, number])[],
  idleBeforeMiB: number,
  idleAfterMiB: number,
): RssCurve {
  const ys = points.map((p) => p[1]).filter(Number.isFinite);
  const third = Math.max(1, Math.floor(points.length / 3));
  const middle = points.slice(third, 2 * third).map((p) => p[1]);
  const last = points.slice(2 * third).map((p) => p[1]);
  const middleMiB = middle.length > 0 ? median(middle) : Number.NaN;
  const lastMiB = last.length > 0 ? median(last) : Number.NaN;
  const slopeMiBPerMin = slope(points.slice(Math.floor(points.length / 2))) * 60;
  const end = points.at(-1)?.[0] ?? 0;
  const tail = points.filter((p) => p[0] >= end - SETTLE_S).map((p) => p[1]);
  const returning =
    middle.length > 0 &&
    last.length > 0 &&
    Math.max(...last) <= Math.max(...middle) + RETURN_SLACK_MIB &&
    Math.min(...last) <= middleMiB;
  const settled =
    end - (points[0]?.[0] ?? end) >= 2 * SETTLE_S &&
    tail.length >= 2 &&
    Math.max(...tail) - Math.min(...tail) <= SETTLE_BAND_MIB;
  return {
    service,
    points,
    idleBeforeMiB,
    idleAfterMiB,
    maxMiB: ys.length > 0 ? Math.max(...ys) : Number.NaN,
    middleMiB,
    lastMiB,
    slopeMiBPerMin,
    settled,
    returning,
    // Under a minute of samples, a slope per minute says nothing: not judged (counted as bounded).
    bounded: end < 60 || settled || returning || (lastMiB <= middleMiB * 1.1 + 8 && slopeMiBPerMin < 2),
  };
}

const services: readonly OurService[] = ['write-api', 'read-api', 'projector'];

export const soak: Scenario = {
  name: 'soak',
  description:
    'Memory over a long mixed workload through the public port (the read-api, forwarding the writes): event ' +
    'writes (lay report, deposit, transfer, consumption) and projection/relationship reads at fixed rates, RSS ' +
    'of every process sampled every few seconds; idle RSS of our three services before and after, run as ' +
    '`pnpm start` runs them (no node flags). Ours only (`--duration` sets its length; 10 min by default).',
  services: { ours: services, baseline: [] },
  async run(context): Promise<ScenarioResult> {
    const { plan, stack } = context;
    if (!context.sides.includes('ours')) {
      return {
        name: 'soak',
        description: this.description,
        cases: [],
        figures: {},
        notes: ['ours not measured'],
      };
    }
    const seconds = plan.soakSec;
    const every = plan.quick ? 0.5 : 5;
    const writeRate = plan.quick ? 50 : 200;
    const readRate = plan.quick ? 50 : 300;
    const pids = stack.pids(services);
    const sampleAll = () => pids.map(rssMiB);
    // Idle before: give the freshly started processes a moment to settle.
    await sleep(plan.quick ? 500 : 5000);
    const idleBefore = sampleAll();
    const base = stack.url('read-api');
    const points: [number, number][][] = services.map(() => []);
    const started = performance.now();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const t = (performance.now() - started) / 1000;
        const values = sampleAll();
        for (let i = 0; i < values.length; i++) points[i]!.push([t, values[i]!]);
        await sleep(every * 1000);
      }
    })();
    const [writes, reads] = await Promise.all([
      runLoad(
        {
          label: 'soak writes',
          baseUrl: base,
          connections: 10,
          steps: writerSteps(context),
          overallRate: writeRate,
        },
        seconds,
      ),
      runLoad(
        {
          label: 'soak reads',
          baseUrl: base,
          connections: 10,
          steps: readerSteps(context),
          overallRate: readRate,
        },
        seconds,
      ),
    ]);
    sampling = false;
    await sampler;
    assertClean(writes);
    assertClean(reads);
    await sleep(plan.quick ? 500 : 10_000);
    const idleAfter = sampleAll();
    const curves = services.map((service, i) =>
      judgeCurve(service, points[i]!, idleBefore[i]!, idleAfter[i]!),
    );
    const total = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
    const result: SoakResult = {
      seconds,
      sampleEverySec: every,
      writeRate,
      readRate,
      requests: writes.requests + reads.requests,
      curves,
      idleBeforeTotalMiB: total(idleBefore),
      idleAfterTotalMiB: total(idleAfter),
    };
    context.log(
      `  soak: ${result.requests} requests in ${seconds} s; idle RSS ${result.idleBeforeTotalMiB.toFixed(0)} MiB before, ${result.idleAfterTotalMiB.toFixed(0)} MiB after; ` +
        curves
          .map(
            (c) =>
              `${c.service} ${c.middleMiB.toFixed(0)}→${c.lastMiB.toFixed(0)} MiB (${curveVerdict(c) === 'growing' ? 'GROWING' : curveVerdict(c)})`,
          )
          .join(', '),
    );
    return {
      name: 'soak',
      description: this.description,
      cases: [],
      figures: {
        idle_rss_before_mib: result.idleBeforeTotalMiB,
        idle_rss_after_mib: result.idleAfterTotalMiB,
      },
      notes: [`${seconds} s at ${writeRate} writes/s and ${readRate} reads/s; RSS sampled every ${every} s.`],
      soak: result,
    };
  },
};
