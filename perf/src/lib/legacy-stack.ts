import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, repoRoot } from './env.js';

/** A process of the legacy pipeline that the fault matrix kills. */
export type Victim = 'layer' | 'connect' | 'broker';

export interface LegacyStack {
  readonly urls: { readonly public: string; readonly write: string; readonly layer: string };
  readonly databaseUrl: string;
  /** Everything the supervisor printed. */
  readonly output: string[];
  /** The pid of the process that is `victim` now (the layer's node, Connect's or Kafka's JVM). */
  pid(victim: Victim): number | undefined;
  /** Ctrl-C, as a user stops it; removes the data directory unless `keep`. */
  stop(keep?: boolean): Promise<void>;
}

/** pid, parent pid and command line of every process. */
function processTable(): { pid: number; ppid: number; args: string }[] {
  return execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8', maxBuffer: 16 << 20 })
    .trim()
    .split('\n')
    .map((line) => {
      const [, pid, ppid, args] = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line) ?? [];
      return { pid: Number(pid), ppid: Number(ppid), args: args ?? '' };
    });
}

const victims: Record<Victim, { readonly parent?: RegExp; readonly self: RegExp }> = {
  layer: { self: /services\/legacy-sync\/dist\/main\.js/ },
  connect: { parent: /infra\/connect\/server\.mjs/, self: /^java / },
  broker: { parent: /infra\/kafka\/server\.mjs/, self: /^java / },
};

/**
 * Runs `pnpm start:legacy` (the supervisor with `--legacy`, after a build) on free ports over a fresh data
 * directory and waits for its banner: PostgreSQL, Kafka, Connect with the layer's connector running,
 * the stack and the layer.
 */
export async function startLegacyStack(env: Record<string, string> = {}): Promise<LegacyStack> {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-legacy-perf-'));
  // PostgreSQL runs as its own account when this runs as root: it must reach its directory.
  chmodSync(dir, 0o755);
  const ports = {
    write: await freePort(),
    read: await freePort(),
    projector: await freePort(),
    legacy: await freePort(),
    postgres: await freePort(),
    kafka: await freePort(),
    connect: await freePort(),
  };
  const output: string[] = [];
  const child: ChildProcess = spawn(
    process.execPath,
    [join(repoRoot, 'services/stack/dist/main.js'), '--legacy'],
    {
      env: {
        ...process.env,
        EGGMESH_DATA_DIR: dir,
        WRITE_API_PORT: String(ports.write),
        READ_API_PORT: String(ports.read),
        PROJECTOR_PORT: String(ports.projector),
        LEGACY_SYNC_PORT: String(ports.legacy),
        EGGMESH_DEV_POSTGRES_PORT: String(ports.postgres),
        EGGMESH_DEV_KAFKA_PORT: String(ports.kafka),
        EGGMESH_DEV_CONNECT_PORT: String(ports.connect),
        EGGMESH_LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (d) => output.push(String(d)));
  child.stderr?.on('data', (d) => output.push(String(d)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (keep = false) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(timer);
    }
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 600_000;
  while (!output.join('').includes('eggmesh is up')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop(true);
      throw new Error(`pnpm start:legacy did not come up (data in ${dir}):\n${output.join('')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const descendants = () => {
    const table = processTable();
    const found: typeof table = [];
    const visit = (parent: number) => {
      for (const row of table)
        if (row.ppid === parent) {
          found.push(row);
          visit(row.pid);
        }
    };
    visit(child.pid ?? -1);
    return found;
  };
  return {
    urls: {
      public: `http://127.0.0.1:${ports.read}`,
      write: `http://127.0.0.1:${ports.write}`,
      layer: `http://127.0.0.1:${ports.legacy}`,
    },
    databaseUrl: `postgresql://postgres@127.0.0.1:${ports.postgres}/legacy`,
    output,
    pid(victim) {
      const { parent, self } = victims[victim];
      const all = descendants();
      const parents = parent ? all.filter((row) => parent.test(row.args)).map((row) => row.pid) : undefined;
      return all.find((row) => self.test(row.args) && (!parents || parents.includes(row.ppid)))?.pid;
    },
    stop,
  };
}
