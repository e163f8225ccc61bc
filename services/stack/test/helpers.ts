import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../infra/test/process.js';

/** The supervisor `pnpm start` runs; the e2e specs drive it as a real process tree. */
export const stackMain = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** The read-api's server as the supervisor runs it, for a test that starts a second replica beside the stack's. */
export const readApiServer = fileURLToPath(new URL('../../read-api/dist/server.js', import.meta.url));

/** The node flags (if any) package.json's start script gives the supervisor: the specs start it the same way. */
const startFlags = (): string[] => {
  const { scripts } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const flags = /\bnode((?: --[\w-]+(?:=\S+)?)*) services\/stack\/dist\/main\.js/.exec(scripts.start ?? '');
  if (!flags) throw new Error("package.json's start script does not run services/stack/dist/main.js");
  return flags[1]!.split(' ').filter((flag) => flag !== '');
};

/** `node` arguments that run the supervisor as `pnpm start` does. */
export const stackArgs: readonly string[] = [...startFlags(), stackMain];

export { freePort };

export async function until<T>(
  probe: () => Promise<T | undefined>,
  ms = 30_000,
  describe: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out${describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface RunningStack {
  readonly process: ChildProcess;
  readonly dataDir: string;
  /**
   * Base URLs (no trailing slash) of the public port (the read-api), of the write-api behind it, and of
   * the projector's metrics.
   */
  readonly urls: { readonly public: string; readonly write: string; readonly projector: string };
  /** Everything the supervisor printed so far. */
  readonly output: string[];
  /** Stops the tree (SIGINT, so the supervisor stops its children; SIGKILL after 20 s) and removes the data dir. */
  stop(): Promise<void>;
}

/**
 * Stops a supervisor the way Ctrl-C does (SIGINT: it stops its services and the servers it started,
 * then exits), and only if it has not exited after `graceMs` kills it. A SIGKILL alone would leave its
 * services and test servers running after the tests.
 */
export async function stopSupervisor(child: ChildProcess, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts the whole embedded stack on free ports over a fresh temp data dir and waits until the public
 * port and the write-api behind it are ready.
 */
export async function startStack(env: Record<string, string> = {}): Promise<RunningStack> {
  if (!existsSync(stackMain)) throw new Error('run `pnpm build` first');
  const dataDir = mkdtempSync(join(tmpdir(), 'eggmesh-stack-'));
  const [write, read, projector] = [await freePort(), await freePort(), await freePort()];
  const output: string[] = [];
  const child = spawn(process.execPath, [...stackArgs], {
    env: {
      ...process.env,
      EGGMESH_DATA_DIR: dataDir,
      WRITE_API_PORT: String(write),
      READ_API_PORT: String(read),
      PROJECTOR_PORT: String(projector),
      EGGMESH_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => output.push(String(d)));
  child.stderr?.on('data', (d) => output.push(String(d)));
  const urls = {
    public: `http://127.0.0.1:${read}`,
    write: `http://127.0.0.1:${write}`,
    projector: `http://127.0.0.1:${projector}`,
  };
  const stop = async () => {
    await stopSupervisor(child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await until(
      async () =>
        (await fetch(`${urls.public}/ready`)).ok && (await fetch(`${urls.write}/ready`)).ok
          ? true
          : undefined,
      // A shared machine can take long to start four Node processes; the stack.e2e suite waits as long.
      150_000,
      () => `; stack output:\n${output.join('\n')}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { process: child, dataDir, urls, output, stop };
}
