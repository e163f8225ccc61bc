/**
 * Summaries of V8 CPU profiles (`node --cpu-prof` → `*.cpuprofile`): self time per function and per
 * module (package or workspace folder), GC and idle apart, so a report can say where a slow path spends.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

export interface CpuProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
    readonly columnNumber: number;
  };
  readonly hitCount?: number;
  readonly children?: readonly number[];
}

export interface CpuProfile {
  readonly nodes: readonly CpuProfileNode[];
  /** µs */
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
  /** µs between consecutive samples (the first from startTime). */
  readonly timeDeltas?: readonly number[];
}

export interface ProfileEntry {
  /** A function (`name (file:line)`) or a module (`fastify`, `services/read-api`, `(garbage collector)`). */
  readonly name: string;
  readonly selfMs: number;
  /** Share of the busy time (everything but `(idle)`), %. */
  readonly busyPct: number;
}

export interface ProfileSummary {
  /** Which process: the profile's folder under the run's profiles/ (e.g. `read-api`, `rebuild-national`). */
  readonly process: string;
  readonly file: string;
  readonly totalMs: number;
  readonly idleMs: number;
  readonly busyMs: number;
  readonly gcMs: number;
  readonly topFunctions: readonly ProfileEntry[];
  readonly topModules: readonly ProfileEntry[];
}

const special = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** A script URL shortened: the repo-relative path, `pkg/...` inside node_modules, `node:...` as is. */
export function shortUrl(url: string, root = ''): string {
  if (url === '') return '';
  let path = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) return path.slice(nm + '/node_modules/'.length);
  if (root && path.startsWith(`${root}/`)) path = path.slice(root.length + 1);
  return path;
}

/** The module a script belongs to: npm package, workspace folder (`services/read-api`), `node:` internals. */
export function moduleOf(url: string, functionName: string, root = ''): string {
  if (url === '') return special.has(functionName) ? functionName : '(V8 builtins / native)';
  if (url.startsWith('node:')) return 'node internals';
  const path = shortUrl(url, root);
  if (url.includes('/node_modules/')) {
    const parts = path.split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const parts = path.split('/');
  // perf/dist/baselines/bare-rest.js → perf/baselines
  if (parts[0] === 'perf' && (parts[1] === 'dist' || parts[1] === 'src') && parts.length > 3) {
    return `perf/${parts[2]}`;
  }
  if ((parts[0] === 'services' || parts[0] === 'packages' || parts[0] === 'perf') && parts.length > 2) {
    return `${parts[0]}/${parts[1]}`;
  }
  return path;
}

/**
 * Self time per profile node, in µs (each sample lasts until the next one; the last until endTime).
 * `fromUs`: only the samples taken that long after the profile started (start-up and warm-up left out);
 * a profile without a sample list has no times and is counted whole.
 */
export function selfTimes(profile: CpuProfile, fromUs = 0): Map<number, number> {
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  if (samples.length === 0) {
    // No sample list: fall back to hit counts spread evenly over the profile.
    const hits = profile.nodes.reduce((n, node) => n + (node.hitCount ?? 0), 0);
    const per = hits > 0 ? (profile.endTime - profile.startTime) / hits : 0;
    for (const node of profile.nodes) if (node.hitCount) self.set(node.id, node.hitCount * per);
    return self;
  }
  let t = profile.startTime;
  const times = samples.map((_, i) => {
    t += deltas[i] ?? 0;
    return t;
  });
  const from = profile.startTime + fromUs;
  for (let i = 0; i < samples.length; i++) {
    if (times[i]! < from) continue;
    const next = i + 1 < samples.length ? times[i + 1]! : Math.max(profile.endTime, times[i]!);
    const duration = Math.max(0, next - times[i]!);
    self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + duration);
  }
  return self;
}

export function summarizeProfile(
  profile: CpuProfile,
  options: { process?: string; file?: string; top?: number; root?: string; fromMs?: number } = {},
): ProfileSummary {
  const top = options.top ?? 20;
  const root = options.root ?? '';
  const self = selfTimes(profile, (options.fromMs ?? 0) * 1000);
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let total = 0;
  let idle = 0;
  let gc = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    total += us;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    if (functionName === '(garbage collector)') gc += us;
    const where = url ? ` (${shortUrl(url, root)}:${lineNumber + 1})` : '';
    const fn = `${functionName || '(anonymous)'}${where}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const module = moduleOf(url, functionName, root);
    byModule.set(module, (byModule.get(module) ?? 0) + us);
  }
  const busy = total - idle;
  const rank = (map: Map<string, number>): ProfileEntry[] =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        selfMs: us / 1000,
        busyPct: busy > 0 ? (us / busy) * 100 : 0,
      }));
  return {
    process: options.process ?? '',
    file: options.file ?? '',
    totalMs: total / 1000,
    idleMs: idle / 1000,
    busyMs: busy / 1000,
    gcMs: gc / 1000,
    topFunctions: rank(byFunction),
    topModules: rank(byModule),
  };
}

/** Every `*.cpuprofile` under `dir` (recursively), oldest first. */
export function findProfiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (e.endsWith('.cpuprofile')) found.push(p);
    }
  };
  walk(dir);
  return found.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
}

/** Summaries of every profile under `dir`; `process` is the profile's folder relative to `dir`. */
export function summarizeProfilesIn(
  dir: string,
  options: { top?: number; root?: string; fromMs?: number } = {},
): ProfileSummary[] {
  return findProfiles(dir).map((file) => {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const folder = relative(dir, join(file, '..')) || basename(file);
    return summarizeProfile(profile, { ...options, process: folder, file });
  });
}

/** A profile summary as Markdown (two tables: functions and modules by self time). */
export function profileMarkdown(summary: ProfileSummary, top = 15): string[] {
  const f = (ms: number) => ms.toLocaleString('en-US', { maximumFractionDigits: 0 });
  const lines = [
    `**${summary.process}**: ${f(summary.busyMs)} ms busy of ${f(summary.totalMs)} ms sampled (GC ${f(summary.gcMs)} ms, ${summary.busyMs > 0 ? ((summary.gcMs / summary.busyMs) * 100).toFixed(1) : '0'}% of busy).`,
    '',
    '| self ms | % busy | function (file:line) |',
    '|--:|--:|---|',
    ...summary.topFunctions
      .slice(0, top)
      .map((e) => `| ${f(e.selfMs)} | ${e.busyPct.toFixed(1)} | \`${e.name.replaceAll('|', '\\|')}\` |`),
    '',
    '| self ms | % busy | module |',
    '|--:|--:|---|',
    ...summary.topModules.slice(0, 10).map((e) => `| ${f(e.selfMs)} | ${e.busyPct.toFixed(1)} | ${e.name} |`),
    '',
  ];
  return lines;
}
