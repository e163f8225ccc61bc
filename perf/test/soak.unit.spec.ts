import { describe, expect, it } from 'vitest';
import { lineChartSvg } from '../src/lib/svg.js';
import { frontCpuShare } from '../src/scenarios/latency.js';
import { curveVerdict, judgeCurve, parseVmRss, slope } from '../src/scenarios/soak.js';

describe('soak: RSS curves', () => {
  it('reads VmRSS from /proc/<pid>/status in MiB', () => {
    expect(parseVmRss('Name:\tnode\nVmPeak:\t  999 kB\nVmRSS:\t  102400 kB\nVmData:\t1 kB\n')).toBe(100);
    expect(parseVmRss('Name:\tnode\n')).toBeNaN();
  });

  it('fits a least-squares slope', () => {
    expect(
      slope([
        [0, 1],
        [1, 3],
        [2, 5],
      ]),
    ).toBeCloseTo(2);
    expect(slope([[0, 7]])).toBe(0);
  });

  it('calls a flat curve bounded and a steadily growing one not', () => {
    const flat = Array.from({ length: 60 }, (_, i) => [i * 5, 100 + (i % 3)] as const);
    expect(judgeCurve('x', flat, 90, 95).bounded).toBe(true);
    // 100 MiB + 1 MiB every 5 s: 12 MiB/min.
    const leak = Array.from({ length: 60 }, (_, i) => [i * 5, 100 + i] as const);
    const judged = judgeCurve('x', leak, 90, 160);
    expect(judged.bounded).toBe(false);
    expect(judged.slopeMiBPerMin).toBeCloseTo(12);
    expect(judged.maxMiB).toBe(159);
  });

  it('calls a curve that climbs, then stays flat for its last two minutes, bounded (a cache warming up)', () => {
    // 10 minutes: +0.55 MiB every 5 s until 450 s (a projector filling its caches), then flat.
    const plateau = Array.from({ length: 121 }, (_, i) => [i * 5, 150 + Math.min(i, 90) * 0.55] as const);
    const judged = judgeCurve('projector', plateau, 70, 200);
    expect(judged.settled).toBe(true);
    expect(judged.bounded).toBe(true);
    // The same climb without the plateau is growth.
    const climbing = Array.from({ length: 121 }, (_, i) => [i * 5, 150 + i * 0.55] as const);
    expect(judgeCurve('projector', climbing, 70, 220)).toMatchObject({ settled: false, bounded: false });
    // Flat only for the last minute: too short to call it settled.
    const late = Array.from({ length: 121 }, (_, i) => [i * 5, 150 + Math.min(i, 108) * 0.55] as const);
    expect(judgeCurve('projector', late, 70, 220)).toMatchObject({ settled: false, bounded: false });
  });

  it("calls a garbage collector's sawtooth bounded whichever phase it ends in, and one whose floor climbs not", () => {
    // A collector's sawtooth as a soak shows it: +6.5 MiB every 5 s from 110 to 201, then back,
    // ten minutes, ending on a climb.
    const cycle = 15;
    const saw = Array.from({ length: 120 }, (_, i) => [i * 5, 110 + (i % cycle) * 6.5] as const);
    const judged = judgeCurve('read-api', saw, 94, 95);
    // The slope rule alone reads growth here: the second half ends near a peak.
    expect(judged.slopeMiBPerMin).toBeGreaterThan(2);
    expect(judged.settled).toBe(false);
    expect(judged).toMatchObject({ returning: true, bounded: true });
    expect(curveVerdict(judged)).toBe('falls back');
    // The same sawtooth, 12 MiB higher every cycle: a leak under the collector.
    const creeping = saw.map(([t, y], i) => [t, y + 12 * Math.floor(i / cycle)] as const);
    expect(judgeCurve('read-api', creeping, 94, 200)).toMatchObject({ returning: false, bounded: false });
    expect(curveVerdict(judgeCurve('read-api', creeping, 94, 200))).toBe('growing');
    // Peaks that climb while the floor stays: the collector's limit rising with what it keeps.
    const peaks = saw.map(([t, y], i) => [t, 110 + (y - 110) * (1 + Math.floor(i / cycle) / 4)] as const);
    expect(judgeCurve('read-api', peaks, 94, 200)).toMatchObject({ returning: false, bounded: false });
  });

  it('draws one path per process', () => {
    const svg = lineChartSvg({
      title: 'RSS',
      xUnit: 's',
      yUnit: 'MiB',
      series: [
        {
          name: 'a',
          color: '#000',
          points: [
            [0, 1],
            [1, 2],
          ],
        },
        {
          name: 'b',
          color: '#f00',
          points: [
            [0, 3],
            [1, Number.NaN],
            [2, 4],
          ],
        },
      ],
    });
    expect(svg.match(/<path /g)).toHaveLength(2);
    expect(svg).not.toContain('NaN');
  });
});

describe('latency: front-door CPU share', () => {
  it('is the extra CPU per request through the front door over the direct figure', () => {
    expect(frontCpuShare(0.125, 0.1)).toBeCloseTo(0.25);
    expect(frontCpuShare(0.1, 0)).toBeNull();
    expect(frontCpuShare(Number.NaN, 0.1)).toBeNull();
  });
});
