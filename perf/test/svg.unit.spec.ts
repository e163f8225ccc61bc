import { describe, expect, it } from 'vitest';
import { barChartSvg, escapeXml, formatValue, niceTicks } from '../src/lib/svg.js';

describe('niceTicks', () => {
  it('covers the maximum with round steps of 1, 2 or 5 × 10^k', () => {
    expect(niceTicks(9_300)).toEqual([0, 2_000, 4_000, 6_000, 8_000, 10_000]);
    expect(niceTicks(0.93)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(5)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('gives a unit axis for nothing to show', () => {
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(niceTicks(Number.NaN)).toEqual([0, 1]);
  });
});

describe('formatValue', () => {
  it('abbreviates large numbers and keeps small ones precise', () => {
    expect(formatValue(0)).toBe('0');
    expect(formatValue(0.4234)).toBe('0.42');
    expect(formatValue(12.34)).toBe('12.3');
    expect(formatValue(1_500)).toBe('1.5k');
    expect(formatValue(28_000)).toBe('28k');
    expect(formatValue(5_400_000)).toBe('5.4M');
  });
});

describe('barChartSvg', () => {
  const svg = barChartSvg({
    title: 'req/s <ours> & "baseline"',
    unit: 'req/s',
    categories: ['crud c=100', 'getById'],
    series: [
      { name: 'ours', color: '#1f77b4', values: [7_000, null] },
      { name: 'baseline', color: '#aaaaaa', values: [10_000, 20_000] },
    ],
    references: [{ value: 0.7, label: 'target' }],
  });

  it('draws one bar per known value and skips gaps', () => {
    expect(svg.match(/<\/rect>/g)?.length).toBe(3);
    expect(svg).toContain('<title>ours crud c=100: 7.0k req/s</title>');
  });

  it('escapes text and draws reference lines', () => {
    expect(svg).toContain('req/s &lt;ours&gt; &amp; &quot;baseline&quot;');
    expect(svg).toContain('stroke-dasharray');
    expect(escapeXml(`a<b>&'"`)).toBe('a&lt;b&gt;&amp;&apos;&quot;');
  });

  it('is one well-formed svg element', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<svg/g)?.length).toBe(1);
  });
});
