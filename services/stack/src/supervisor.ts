import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { acceptsConnections, exitCodes } from '@eggmesh/service-kit/config';
import { prettyFactory } from 'pino-pretty';

export interface ServiceSpec {
  readonly name: string;
  /** The script to run with this Node binary. */
  readonly script: string;
  readonly env?: Record<string, string>;
  /** The port it listens on (named when another process holds it). */
  readonly port?: number;
  /**
   * A server the services depend on (a database, a broker): started first, stopped last; the services
   * start once it accepts TCP connections on 127.0.0.1:`port` (or after `infraReadyTimeoutMs`).
   */
  readonly infra?: boolean;
  /** Infra servers that must accept connections before this one starts (Kafka Connect needs its broker). */
  readonly after?: readonly string[];
}

export interface SupervisorOptions {
  readonly services: readonly ServiceSpec[];
  readonly env: NodeJS.ProcessEnv;
  /** Receives each line a service prints, already prefixed. */
  readonly write: (line: string) => void;
  readonly shutdownTimeoutMs: number;
  /** First restart delay; doubles per crash in a row up to maxBackoffMs. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** A run this long resets the backoff. */
  readonly stableAfterMs?: number;
  readonly color?: boolean;
  /**
   * A service exited in a way a restart cannot fix (`exitCodes` of service-kit: invalid configuration,
   * port in use); it is not restarted. `reason` is one readable clause.
   */
  readonly onGiveUp?: (name: string, reason: string) => void;
  /** How long services wait for the infra servers' ports before they start anyway (and retry on their own). */
  readonly infraReadyTimeoutMs?: number;
}

/** Why a service that exited with `code` cannot start, or null for an ordinary crash. */
function fatalReason(spec: ServiceSpec, code: number | null): string | null {
  if (code === exitCodes.config) return 'its configuration is invalid';
  if (code === exitCodes.portInUse)
    return spec.port === undefined
      ? 'its port is in use by another process'
      : `port ${spec.port} is in use by another process`;
  return null;
}

const COLORS = [36, 35, 33, 32, 34, 31];

/**
 * Formats one line a service prints: pino's JSON lines by pino-pretty (`HH:MM:ss LEVEL: message` and
 * the fields on one line, without the service name and pid the prefix already gives); any other line
 * as it is.
 */
export function logFormatter(color: boolean): (line: string) => string {
  const pretty = prettyFactory({
    colorize: color,
    singleLine: true,
    translateTime: 'HH:MM:ss',
    ignore: 'pid,hostname,service',
  });
  return (line) => (line.startsWith('{') ? pretty(line).trimEnd() : line);
}

interface Running {
  readonly spec: ServiceSpec;
  child: ChildProcess | null;
  failures: number;
  startedAt: number;
  timer: NodeJS.Timeout | null;
}

/**
 * Runs each service as its own process with prefixed logs, restarts a crashed one with exponential
 * backoff, and stops them all with SIGTERM (then SIGKILL past the timeout). Whether a running service
 * still answers is for an orchestrator's probes (compose, Kubernetes), not for this.
 */
export class Supervisor {
  private readonly running: Running[];
  private stopping = false;
  private readonly width: number;
  private readonly format: (line: string) => string;

  constructor(private readonly options: SupervisorOptions) {
    this.running = options.services.map((spec) => ({
      spec,
      child: null,
      failures: 0,
      startedAt: 0,
      timer: null,
    }));
    this.width = Math.max(...options.services.map((s) => s.name.length));
    this.format = logFormatter(options.color ?? false);
  }

  private prefix(index: number, name: string): string {
    const label = `[${name.padEnd(this.width)}]`;
    return this.options.color ? `\u001b[${COLORS[index % COLORS.length]}m${label}\u001b[0m` : label;
  }

  /**
   * Starts the infra servers (each once those it comes `after` accept connections), waits until their
   * ports accept connections, then starts the services. Resolves once every process was launched.
   */
  async start(): Promise<void> {
    const infra = this.running.filter((entry) => entry.spec.infra);
    const accepting = new Map<string, Promise<void>>();
    for (const entry of infra) {
      const before = (entry.spec.after ?? []).map((name) => accepting.get(name) ?? Promise.resolve());
      accepting.set(
        entry.spec.name,
        Promise.all(before).then(() => {
          if (this.stopping) return;
          this.launch(entry, this.running.indexOf(entry));
          return this.accepting(entry);
        }),
      );
    }
    await Promise.all(accepting.values());
    if (this.stopping) return;
    this.running.forEach((entry, index) => {
      if (!entry.spec.infra) this.launch(entry, index);
    });
  }

  /** Waits until an infra server accepts connections on its port, or for `infraReadyTimeoutMs` after its launch. */
  private async accepting(entry: Running): Promise<void> {
    const { port, name } = entry.spec;
    if (port === undefined) return;
    const deadline = Date.now() + (this.options.infraReadyTimeoutMs ?? 120_000);
    while (!this.stopping && !(await acceptsConnections(port))) {
      if (Date.now() > deadline) {
        this.options.write(
          `${this.prefix(this.running.indexOf(entry), name)} not accepting connections on port ${port} yet; starting the services anyway (they retry)`,
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private launch(entry: Running, index: number): void {
    const { spec } = entry;
    const child = spawn(process.execPath, [spec.script], {
      env: { ...this.options.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    entry.child = child;
    entry.startedAt = Date.now();
    const prefix = this.prefix(index, spec.name);
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) =>
        this.options.write(`${prefix} ${this.format(line)}`),
      );
    }
    child.on('exit', (code, signal) => {
      entry.child = null;
      if (this.stopping) return;
      const fatal = fatalReason(spec, code);
      if (fatal) {
        this.options.write(`${prefix} cannot start: ${fatal}; not restarting`);
        this.options.onGiveUp?.(spec.name, fatal);
        return;
      }
      const stable = Date.now() - entry.startedAt > (this.options.stableAfterMs ?? 30_000);
      entry.failures = stable ? 1 : entry.failures + 1;
      const delay = Math.min(
        (this.options.backoffMs ?? 250) * 2 ** (entry.failures - 1),
        this.options.maxBackoffMs ?? 10_000,
      );
      this.options.write(
        `${prefix} exited (${signal ?? `code ${code}`}); restarting in ${delay} ms (crash ${entry.failures} in a row)`,
      );
      entry.timer = setTimeout(() => {
        entry.timer = null;
        if (!this.stopping) this.launch(entry, index);
      }, delay);
    });
  }

  /** The pids of the running services, by name (for tests and status output). */
  pids(): Record<string, number | undefined> {
    return Object.fromEntries(this.running.map((r) => [r.spec.name, r.child?.pid]));
  }

  /**
   * Stops every service, then the infra servers in the reverse of their start order: SIGTERM, then
   * SIGKILL for any still running after the timeout.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    // Services first, so none of them loses its database or broker while it still works.
    await this.stopAll(this.running.filter((entry) => !entry.spec.infra));
    // Then the infra servers, those started `after` others before them (Kafka Connect before its broker).
    const infra = this.running.filter((entry) => entry.spec.infra);
    const depth = (entry: Running): number =>
      Math.max(
        0,
        ...(entry.spec.after ?? []).map((name) => {
          const before = infra.find((other) => other.spec.name === name);
          return before ? depth(before) + 1 : 0;
        }),
      );
    for (let level = Math.max(0, ...infra.map(depth)); level >= 0; level--) {
      await this.stopAll(infra.filter((entry) => depth(entry) === level));
    }
  }

  private async stopAll(entries: readonly Running[]): Promise<void> {
    const exits = entries.map((entry) => {
      if (entry.timer) clearTimeout(entry.timer);
      const child = entry.child;
      if (!child || child.exitCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const kill = setTimeout(() => child.kill('SIGKILL'), this.options.shutdownTimeoutMs);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      });
    });
    await Promise.all(exits);
  }
}
