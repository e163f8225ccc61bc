import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ServiceSpec {
  /** A short label used in logs and reports, e.g. `write-api`. */
  readonly name: string;
  /** The script node runs. */
  readonly entry: string;
  readonly args?: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Polled until it answers 2xx. */
  readonly healthUrl: string;
  /** stdout and stderr go here (appended). */
  readonly logFile: string;
  readonly readyTimeoutMs?: number;
  readonly nodeArgs?: readonly string[];
}

/**
 * Every server child still running. Whatever way the bench process ends (an error thrown outside a
 * `finally`, a signal while a server is still starting, `process.exit`), none outlives it.
 */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A server started as a child process (never inside the bench process, so its CPU can be measured alone). */
export class ChildService {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly #child: ChildProcess;
  readonly #exited: Promise<number | null>;
  #exitCode: number | null | undefined;

  private constructor(spec: ServiceSpec, child: ChildProcess) {
    this.name = spec.name;
    this.logFile = spec.logFile;
    this.#child = child;
    if (child.pid === undefined) throw new Error(`${spec.name}: spawn failed`);
    this.pid = child.pid;
    running.add(child);
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        this.#exitCode = code ?? (signal ? -1 : null);
        resolve(this.#exitCode);
      });
    });
  }

  static async start(spec: ServiceSpec): Promise<ChildService> {
    mkdirSync(dirname(spec.logFile), { recursive: true });
    const fd = openSync(spec.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [...(spec.nodeArgs ?? []), spec.entry, ...(spec.args ?? [])], {
        cwd: spec.cwd,
        env: { ...process.env, ...spec.env },
        stdio: ['ignore', fd, fd],
      });
    } finally {
      closeSync(fd);
    }
    const service = new ChildService(spec, child);
    const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
    try {
      await Promise.race([
        waitForHealth(spec.healthUrl, spec.readyTimeoutMs ?? 30_000, () => service.hasExited),
        spawnError,
      ]);
    } catch (error) {
      await service.stop();
      throw new Error(
        `${spec.name} did not become ready: ${(error as Error).message}\n${tail(spec.logFile)}`,
      );
    }
    return service;
  }

  get hasExited(): boolean {
    return this.#exitCode !== undefined;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.hasExited) return;
    this.#child.kill('SIGTERM');
    const timer = sleep(graceMs).then(() => 'timeout' as const);
    if ((await Promise.race([this.#exited, timer])) === 'timeout') {
      this.#child.kill('SIGKILL');
      await this.#exited;
    }
  }
}

/** Polls `url` until it answers 2xx. */
export async function waitForHealth(url: string, timeoutMs: number, gaveUp: () => boolean = () => false) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (gaveUp()) throw new Error('the process exited');
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.ok) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(50);
  }
  throw new Error(`${url}: ${last} after ${timeoutMs} ms`);
}

/** The last lines of a log file, for error messages. */
export function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

let ticksPerSecond: number | undefined;

/** Kernel clock ticks per second (`getconf CLK_TCK`, almost always 100). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number.parseInt(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim(), 10);
    } catch {
      ticksPerSecond = 100;
    }
    if (!Number.isFinite(ticksPerSecond) || ticksPerSecond <= 0) ticksPerSecond = 100;
  }
  return ticksPerSecond;
}

/** utime + stime (clock ticks, all threads) of a process, from /proc/<pid>/stat; NaN if unreadable. */
export function cpuTicks(pid: number): number {
  try {
    return parseStatTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/** Fields 14 (utime) and 15 (stime) of a /proc/<pid>/stat line; the command name may contain spaces. */
export function parseStatTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field n is fields[n - 3].
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU time used by a set of processes between `start()` and `stop()`, in ms. */
export class CpuMeter {
  readonly #pids: readonly number[];
  #before: number[] = [];

  constructor(pids: readonly number[]) {
    this.#pids = pids;
  }

  start(): void {
    this.#before = this.#pids.map(cpuTicks);
  }

  /** Milliseconds of CPU per process (same order as the pids). */
  stop(): number[] {
    const toMs = 1000 / clockTicksPerSecond();
    return this.#pids.map((pid, i) => (cpuTicks(pid) - (this.#before[i] ?? Number.NaN)) * toMs);
  }
}
