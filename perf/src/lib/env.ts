import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** perf/ (this file is perf/dist/lib/env.js or perf/src/lib/env.ts). */
export const perfDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const repoRoot = resolve(perfDir, '..');
/** Scratch space (gitignored): datasets, run directories, logs. */
export const workDir = join(perfDir, '.work');
export const resultsDir = join(perfDir, 'results');

/** A compiled perf script, e.g. `baselines/bare-rest.js`. */
export function perfScript(relative: string): string {
  return join(perfDir, 'dist', relative);
}

export { freePort } from '../../../infra/ports.mjs';

export interface MachineFacts {
  readonly cores: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly loadAverage: readonly number[];
}

export function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** The short commit of the work tree (`nocommit` outside git), with `-dirty` when it has changes. */
export function shortCommit(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${commit}-dirty` : commit;
  } catch {
    return 'nocommit';
  }
}

export function exists(path: string): boolean {
  return existsSync(path);
}
