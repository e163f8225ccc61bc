/** A one-line progress display: count, rate and ETA; redraws in place on a TTY, prints every few seconds otherwise. */
export class Progress {
  readonly #label: string;
  readonly #total: number;
  readonly #stream: NodeJS.WriteStream;
  readonly #started = performance.now();
  #lastDraw = 0;
  #done = 0;

  constructor(label: string, total: number, stream: NodeJS.WriteStream = process.stderr) {
    this.#label = label;
    this.#total = total;
    this.#stream = stream;
  }

  get elapsedSec(): number {
    return (performance.now() - this.#started) / 1000;
  }

  get rate(): number {
    return this.#done / Math.max(this.elapsedSec, 1e-9);
  }

  update(done: number): void {
    this.#done = done;
    const now = performance.now();
    const interval = this.#stream.isTTY ? 200 : 5_000;
    if (now - this.#lastDraw >= interval) {
      this.#lastDraw = now;
      this.#draw(false);
    }
  }

  finish(): void {
    this.#draw(true);
  }

  #draw(final: boolean): void {
    const line = progressLine(this.#label, this.#done, this.#total, this.elapsedSec);
    if (this.#stream.isTTY) this.#stream.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
    else this.#stream.write(`${line}\n`);
  }
}

export function progressLine(label: string, done: number, total: number, elapsedSec: number): string {
  const rate = done / Math.max(elapsedSec, 1e-9);
  const pct = total > 0 ? (done / total) * 100 : 100;
  const width = 24;
  const filled = Math.min(width, Math.round((pct / 100) * width));
  const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
  const eta = rate > 0 && done < total ? ` ETA ${formatDuration((total - done) / rate)}` : '';
  return `${label} [${bar}] ${pct.toFixed(1)}% ${formatInt(done)}/${formatInt(total)} rows, ${formatInt(rate)} rows/s, ${formatDuration(elapsedSec)}${eta}`;
}

export function formatInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return m < 60
    ? `${m}m${String(s).padStart(2, '0')}s`
    : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
