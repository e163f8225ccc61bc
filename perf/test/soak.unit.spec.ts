import { describe, expect, it } from 'vitest';
import { lineChartSvg } from '../src/lib/svg.js';
import { frontCpuShare } from '../src/scenarios/latency.js';
import { judgeCurve, parseVmRss, slope } from '../src/scenarios/soak.js';

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
