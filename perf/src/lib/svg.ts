/** Hand-written SVG charts (no chart library): grouped bars with optional reference lines. */

export interface BarSeries {
  readonly name: string;
  readonly color: string;
  /** One per category; null leaves a gap. */
  readonly values: readonly (number | null)[];
}

export interface BarChartSpec {
  readonly title: string;
  /** Y-axis label, e.g. `req/s`. */
  readonly unit: string;
  readonly categories: readonly string[];
  readonly series: readonly BarSeries[];
  /** Horizontal lines, e.g. a target ratio. */
  readonly references?: readonly { readonly value: number; readonly label: string }[];
}

export function escapeXml(text: string): string {
  return text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!,
  );
}

/** Round tick values covering [0, max]: steps of 1, 2 or 5 × 10^k. */
export function niceTicks(max: number, count = 5): number[] {
  if (!Number.isFinite(max) || max <= 0) return [0, 1];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let v = 0; v < max + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/** Short number labels: 12.3k, 0.42, 1.5. */
export function formatValue(value: number): string {
  const abs = Math.abs(value);
  if (value === 0) return '0';
  if (abs >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (abs >= 1e4) return `${(value / 1e3).toFixed(0)}k`;
  if (abs >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export function barChartSvg(spec: BarChartSpec): string {
  const groups = spec.categories.length;
  const perGroup = Math.max(1, spec.series.length);
  const barWidth = perGroup > 3 ? 12 : 22;
  const groupWidth = perGroup * barWidth + 24;
  // Category labels are rotated 35°; leave room for the longest one below and to the left.
  const labelPx = Math.max(0, ...spec.categories.map((c) => c.length)) * 6;
  const left = Math.max(70, Math.ceil(labelPx * Math.cos(Math.PI / 5.14) - groupWidth / 2 + 10));
  const right = 20;
  const top = 56;
  const plotHeight = 240;
  const bottom = Math.ceil(30 + labelPx * Math.sin(Math.PI / 5.14));
  const width = Math.max(560, left + right + groups * groupWidth);
  const height = top + plotHeight + bottom;
  const values = spec.series.flatMap((s) =>
    s.values.filter((v): v is number => v !== null && Number.isFinite(v)),
  );
  const max = Math.max(0, ...values, ...(spec.references ?? []).map((r) => r.value));
  const ticks = niceTicks(max);
  const yMax = ticks[ticks.length - 1]!;
  const y = (v: number) => top + plotHeight - (v / yMax) * plotHeight;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold">${escapeXml(spec.title)}</text>`,
  ];
  for (const t of ticks) {
    out.push(
      `<line x1="${left}" x2="${width - right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#e5e5e5"/>`,
      `<text x="${left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" fill="#555">${formatValue(t)}</text>`,
    );
  }
  out.push(
    `<text transform="translate(${left - 48} ${top + plotHeight / 2}) rotate(-90)" text-anchor="middle" fill="#333">${escapeXml(spec.unit)}</text>`,
    `<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotHeight}" stroke="#999"/>`,
    `<line x1="${left}" x2="${width - right}" y1="${top + plotHeight}" y2="${top + plotHeight}" stroke="#999"/>`,
  );
  spec.categories.forEach((category, g) => {
    const x0 = left + g * groupWidth + 12;
    spec.series.forEach((series, s) => {
      const v = series.values[g];
      if (v === null || v === undefined || !Number.isFinite(v)) return;
      const x = x0 + s * barWidth;
      const h = Math.max(0, top + plotHeight - y(v));
      out.push(
        `<rect x="${x}" y="${y(v).toFixed(1)}" width="${barWidth - 2}" height="${h.toFixed(1)}" fill="${series.color}"><title>${escapeXml(`${series.name} ${category}: ${formatValue(v)} ${spec.unit}`)}</title></rect>`,
      );
      if (perGroup <= 3) {
        out.push(
          `<text x="${x + (barWidth - 2) / 2}" y="${(y(v) - 3).toFixed(1)}" text-anchor="middle" font-size="9" fill="#333">${formatValue(v)}</text>`,
        );
      }
    });
    const cx = x0 + (perGroup * barWidth) / 2;
    out.push(
      `<text transform="translate(${cx} ${top + plotHeight + 12}) rotate(-35)" text-anchor="end" fill="#333">${escapeXml(category)}</text>`,
    );
  });
  // Reference lines across the plot; their labels go in the legend row, where no bar can hide them.
  for (const ref of spec.references ?? []) {
    out.push(
      `<line x1="${left}" x2="${width - right}" y1="${y(ref.value).toFixed(1)}" y2="${y(ref.value).toFixed(1)}" stroke="#d62728" stroke-dasharray="5 4"><title>${escapeXml(ref.label)}</title></line>`,
    );
  }
  spec.series.forEach((series, s) => {
    const x = left + s * 150;
    out.push(
      `<rect x="${x}" y="32" width="12" height="12" fill="${series.color}"/>`,
      `<text x="${x + 16}" y="42" fill="#333">${escapeXml(series.name)}</text>`,
    );
  });
  (spec.references ?? []).forEach((ref, i) => {
    const x = left + (spec.series.length + i) * 150;
    out.push(
      `<line x1="${x}" x2="${x + 12}" y1="38" y2="38" stroke="#d62728" stroke-dasharray="4 2"/>`,
      `<text x="${x + 16}" y="42" fill="#d62728">${escapeXml(`${ref.label} (${formatValue(ref.value)})`)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

export interface LineSeries {
  readonly name: string;
  readonly color: string;
  /** (x, y) points, x ascending. */
  readonly points: readonly (readonly [number, number])[];
}

export interface LineChartSpec {
  readonly title: string;
  readonly xUnit: string;
  readonly yUnit: string;
  readonly series: readonly LineSeries[];
}

/** Lines over a shared x axis (e.g. RSS over time), y from 0. */
export function lineChartSvg(spec: LineChartSpec): string {
  const left = 70;
  const right = 160;
  const top = 56;
  const plotWidth = 640;
  const plotHeight = 260;
  const bottom = 50;
  const all = spec.series.flatMap((s) => s.points.filter(([, y]) => Number.isFinite(y)));
  const maxX = Math.max(1, ...all.map(([x]) => x));
  const yTicks = niceTicks(Math.max(1, ...all.map(([, y]) => y)));
  const maxY = yTicks[yTicks.length - 1] ?? 1;
  const xTicks = niceTicks(maxX, 6);
  const px = (x: number) => left + (x / (xTicks[xTicks.length - 1] ?? maxX)) * plotWidth;
  const py = (y: number) => top + plotHeight - (y / maxY) * plotHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${left + plotWidth + right}" height="${top + plotHeight + bottom}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="24" font-size="15" font-weight="bold">${escapeXml(spec.title)}</text>`,
  ];
  for (const t of yTicks) {
    parts.push(
      `<line x1="${left}" x2="${left + plotWidth}" y1="${py(t)}" y2="${py(t)}" stroke="#e5e5e5"/>`,
      `<text x="${left - 6}" y="${py(t) + 4}" text-anchor="end">${formatValue(t)}</text>`,
    );
  }
  for (const t of xTicks) {
    parts.push(
      `<text x="${px(t)}" y="${top + plotHeight + 18}" text-anchor="middle">${formatValue(t)}</text>`,
    );
  }
  parts.push(
    `<text x="${left + plotWidth / 2}" y="${top + plotHeight + 40}" text-anchor="middle">${escapeXml(spec.xUnit)}</text>`,
    `<text x="16" y="${top + plotHeight / 2}" transform="rotate(-90 16 ${top + plotHeight / 2})" text-anchor="middle">${escapeXml(spec.yUnit)}</text>`,
  );
  spec.series.forEach((s, i) => {
    const d = s.points
      .filter(([, y]) => Number.isFinite(y))
      .map(([x, y], k) => `${k === 0 ? 'M' : 'L'}${px(x).toFixed(1)},${py(y).toFixed(1)}`)
      .join(' ');
    if (d) parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
    const ly = top + 14 + i * 18;
    parts.push(
      `<rect x="${left + plotWidth + 14}" y="${ly - 9}" width="12" height="12" fill="${s.color}"/>`,
      `<text x="${left + plotWidth + 32}" y="${ly + 1}">${escapeXml(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
