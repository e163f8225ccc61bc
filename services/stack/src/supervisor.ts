import { type ChildProcess, spawn } from 'node:child_process';
import { Agent, get } from 'node:http';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { exitCodes } from '@eggmesh/service-kit/config';

export interface ServiceSpec {
  readonly name: string;
  /** The script to run with this Node binary. */
  readonly script: string;
  /** Node flags before the script (V8 flags NODE_OPTIONS does not accept, such as `--lite-mode`). */
  readonly nodeArgs?: readonly string[];
  readonly env?: Record<string, string>;
  /** Polled after start; the banner waits until it answers 2xx. */
  readonly healthUrl?: string;
  /**
   * A server the services depend on (a database, a broker): started first, stopped last. With `port`,
   * the services start once it accepts TCP connections on 127.0.0.1 (or after `infraReadyTimeoutMs`).
   */
  readonly infra?: boolean;
  readonly port?: number;
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
   * Liveness: each service with a healthUrl is asked every intervalMs; once it has answered since its
   * start, `failures` probes in a row that fail (no 2xx within timeoutMs) get it killed (SIGKILL) and
   * restarted. A process stuck at 100% CPU answers nothing and would otherwise stay up for good.
   */
  readonly healthProbe?: {
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly failures: number;
  };
  /**
   * A service exited in a way a restart cannot fix (`exitCodes` of service-kit: invalid configuration,
   * port in use); it is not restarted. `reason` is one readable clause.
   */
  readonly onGiveUp?: (name: string, reason: string) => void;
  /** How long services wait for the infra servers' ports before they start anyway (and retry on their own). */
  readonly infraReadyTimeoutMs?: number;
}

/**
 * GET `url` over node:http: the status and the body as text, or null when nothing answered within
 * `timeoutMs`. Not `fetch`: its HTTP client (undici) costs the supervisor ~5 MiB of RSS more.
 */
export function httpGet(
  url: string,
  timeoutMs: number,
  agent: Agent | false = false,
): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    const request = get(url, { timeout: timeoutMs, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', () => resolve(null));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive connection the service closed as this request went out (its keep-alive timeout,
      // a restart): says nothing about the service, so ask once more on a new connection.
      if (agent && request.reusedSocket && error.code === 'ECONNRESET') {
        void httpGet(url, timeoutMs, agent).then(resolve);
      } else resolve(null);
    });
  });
}

/** Resolves true once something accepts a TCP connection on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Why a service that exited with `code` cannot start, or null for an ordinary crash. */
function fatalReason(spec: ServiceSpec, code: number | null): string | null {
  if (code === exitCodes.config) return 'its configuration is invalid';
  if (code === exitCodes.portInUse) {
    const port = spec.healthUrl ? new URL(spec.healthUrl).port : '';
    return port ? `port ${port} is in use by another process` : 'its port is in use by another process';
  }
  return null;
}

const COLORS = [36, 35, 33, 32, 34, 31];
const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Turns a pino JSON line into `HH:MM:SS LEVEL message key=value…`; other lines pass through. */
export function formatLogLine(line: string): string {
  if (!line.startsWith('{')) return line;
  try {
    const {
      level,
      time,
      msg,
      service: _service,
      pid: _pid,
      hostname: _host,
      ...rest
    } = JSON.parse(line) as Record<string, unknown>;
    const clock = typeof time === 'number' ? new Date(time).toISOString().slice(11, 19) : '';
    const extras = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    return `${clock} ${(LEVELS[level as number] ?? String(level)).padEnd(5)} ${msg ?? ''}${extras ? ` ${extras}` : ''}`;
  } catch {
    return line;
  }
}

interface Running {
  spec: ServiceSpec;
  child: ChildProcess | null;
  failures: number;
  startedAt: number;
  timer: NodeJS.Timeout | null;
  probe: NodeJS.Timeout | null;
}

/**
 * Runs each service as its own process with prefixed logs, restarts a crashed one with
 * exponential backoff, and stops them all with SIGTERM (then SIGKILL past the timeout).
 */
export class Supervisor {
  private readonly running: Running[];
  private stopping = false;
  /**
   * One kept-alive connection per service for the /health probes: a probe is then one request on an
   * open socket, not a TCP connect, accept and close on both sides (measured on the idle stack: the
   * probes were 0.3 % of a core of its 0.5 % with a new connection each).
   */
  private readonly probeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  private readonly width: number;

  constructor(private readonly options: SupervisorOptions) {
    this.running = options.services.map((spec) => ({
      spec,
      child: null,
      failures: 0,
      startedAt: 0,
      timer: null,
      probe: null,
    }));
    this.width = Math.max(...options.services.map((s) => s.name.length));
  }

  private prefix(index: number, name: string): string {
    const label = `[${name.padEnd(this.width)}]`;
    return this.options.color ? `\u001b[${COLORS[index % COLORS.length]}m${label}\u001b[0m` : label;
  }

  /**
   * Starts the infra servers, waits until their ports accept connections, then starts the services.
   * Resolves once every process was launched.
   */
  async start(): Promise<void> {
    const infra = this.running.filter((entry) => entry.spec.infra);
    for (const entry of infra) this.launch(entry, this.running.indexOf(entry));
    const deadline = Date.now() + (this.options.infraReadyTimeoutMs ?? 120_000);
    for (const entry of infra) {
      const { port, name } = entry.spec;
      if (port === undefined) continue;
      while (!this.stopping && !(await accepts(port))) {
        if (Date.now() > deadline) {
          this.options.write(
            `${this.prefix(this.running.indexOf(entry), name)} not accepting connections on port ${port} yet; starting the services anyway (they retry)`,
          );
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    if (this.stopping) return;
    this.running.forEach((entry, index) => {
      if (!entry.spec.infra) this.launch(entry, index);
    });
  }

  private launch(entry: Running, index: number): void {
    const { spec } = entry;
    const child = spawn(process.execPath, [...(spec.nodeArgs ?? []), spec.script], {
      env: { ...this.options.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    entry.child = child;
    entry.startedAt = Date.now();
    const prefix = this.prefix(index, spec.name);
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) =>
        this.options.write(`${prefix} ${formatLogLine(line)}`),
      );
    }
    this.watch(entry, child, prefix);
    child.on('exit', (code, signal) => {
      entry.child = null;
      if (entry.probe) clearTimeout(entry.probe);
      entry.probe = null;
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

  /** Probes `spec.healthUrl` of a running child until it exits; kills it when it stops answering. */
  private watch(entry: Running, child: ChildProcess, prefix: string): void {
    const { healthProbe } = this.options;
    const url = entry.spec.healthUrl;
    if (!healthProbe || !url) return;
    let answered = false;
    let failed = 0;
    const probe = async () => {
      entry.probe = null;
      let ok = false;
      const response = await httpGet(url, healthProbe.timeoutMs, this.probeAgent);
      ok = response !== null && response.status >= 200 && response.status < 300;
      if (entry.child !== child || this.stopping) return;
      if (ok) {
        answered = true;
        failed = 0;
      } else if (answered) {
        failed += 1;
        if (failed >= healthProbe.failures) {
          this.options.write(
            `${prefix} not answering ${url} (${failed} probes in a row) within ${healthProbe.timeoutMs} ms; killing pid ${child.pid} to restart it`,
          );
          child.kill('SIGKILL');
          return;
        }
      }
      entry.probe = setTimeout(() => void probe(), healthProbe.intervalMs);
    };
    entry.probe = setTimeout(() => void probe(), healthProbe.intervalMs);
  }

  /** The pids of the running services, by name (for tests and status output). */
  pids(): Record<string, number | undefined> {
    return Object.fromEntries(this.running.map((r) => [r.spec.name, r.child?.pid]));
  }

  /** Stops every service, then the infra servers: SIGTERM, then SIGKILL for any still running after the timeout. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.probeAgent.destroy();
    // Services first, so none of them loses its database or broker while it still works.
    await this.stopAll(this.running.filter((entry) => !entry.spec.infra));
    await this.stopAll(this.running.filter((entry) => entry.spec.infra));
  }

  private async stopAll(entries: readonly Running[]): Promise<void> {
    const exits = entries.map((entry) => {
      if (entry.timer) clearTimeout(entry.timer);
      if (entry.probe) clearTimeout(entry.probe);
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
