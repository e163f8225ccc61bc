import { esc } from '../../shared/api.js';
import type { Bar } from './model.js';

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

const ROW = 26;
const LABEL = 130;
const WIDTH = 360;
const VALUE = 56;

/**
 * Horizontal bars as an SVG: one row per bar, its label, its bar scaled to the largest value (or to
 * `max`), its value. The picture is described for screen readers by its aria-label.
 */
export function bars(items: readonly Bar[], options: { max?: number; unit?: string; empty: string }): string {
  if (items.length === 0) return `<p class="empty">${esc(options.empty)}</p>`;
  const unit = options.unit ?? '';
  const max = options.max ?? Math.max(1, ...items.map((i) => i.value));
  const track = WIDTH - LABEL - VALUE;
  const shown = (v: number) => `${fmt(v, Number.isInteger(v) ? 0 : 1)}${unit}`;
  const rows = items.map((item, i) => {
    const y = i * ROW;
    const w = Math.max(0, Math.min(1, item.value / max)) * track;
    const label = item.label.length > 18 ? `${item.label.slice(0, 17)}…` : item.label;
    return `<g><title>${esc(item.label)}: ${shown(item.value)}</title>
<text x="0" y="${y + 17}" class="label">${esc(label)}</text>
<rect x="${LABEL}" y="${y + 5}" width="${w.toFixed(1)}" height="${ROW - 10}" rx="2" class="bar"></rect>
<text x="${WIDTH}" y="${y + 17}" class="value" text-anchor="end">${shown(item.value)}</text></g>`;
  });
  const described = items.map((i) => `${i.label} ${shown(i.value)}`).join(', ');
  return `<svg class="bars" viewBox="0 0 ${WIDTH} ${items.length * ROW}" role="img" aria-label="${esc(described)}">${rows.join('')}</svg>`;
}
