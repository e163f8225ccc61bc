import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../infra/test/process.js';
import { sharedKafkaBrokers } from '../../../infra/test/shared-servers.js';

export { freePort };

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const brokers = await sharedKafkaBrokers();
export const kafkaBrokers = (): string => brokers;
export const freshTopic = (): string => `t.${randomUUID().replace(/-/g, '').slice(0, 20)}`;
export const tempDir = (prefix = 'eggmesh-relay-'): string => mkdtempSync(join(tmpdir(), prefix));

const newestMtime = (dir: string): number => {
  let newest = 0;
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    newest = Math.max(newest, statSync(join(dir, name)).mtimeMs);
  }
  return newest;
};

/**
 * Builds the services these tests run as processes when their dist is missing or older than their
 * sources (one build at a time across test files: a lock directory).
 */
export async function ensureBuilt(services: readonly string[]): Promise<void> {
  const lock = join(tmpdir(), 'eggmesh-relay-build.lock');
  const deadline = Date.now() + 150_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`build lock ${lock} held too long`);
      await sleep(200);
    }
  }
  try {
    const stale = services.some((s) => {
      const dist = join(REPO, 'services', s, 'dist');
      return !existsSync(dist) || newestMtime(join(REPO, 'services', s, 'src')) > newestMtime(dist);
    });
    if (!stale) return;
    execFileSync(
      process.execPath,
      [join(REPO, 'node_modules/typescript/bin/tsc'), '-b', ...services.map((s) => `services/${s}`)],
      {
        cwd: REPO,
        stdio: 'pipe',
        timeout: 140_000,
      },
    );
  } finally {
    rmdirSync(lock);
  }
}

export interface Service {
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: () => string;
  readonly exited: Promise<number | string>;
}

/** Runs `services/<name>/dist/<script>` with the given environment (on top of a quiet default). */
export function startService(
  name: string,
  script: string,
  env: Record<string, string>,
  portVar: string,
  port: number,
  args: readonly string[] = [],
): Service {
  const child = spawn(process.execPath, [join(REPO, 'services', name, 'dist', script), ...args], {
    cwd: REPO,
    env: {
      ...process.env,
      EGGMESH_HOST: '127.0.0.1',
      EGGMESH_LOG_LEVEL: 'info',
      [portVar]: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-200_000);
  });
  child.stderr?.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-200_000);
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1));
  });
  return { child, url: `http://127.0.0.1:${port}`, output: () => output, exited };
}

export async function stop(service: Service | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill(signal);
  await service.exited;
}

export async function getJson(
  url: string,
): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  } catch {
    return null;
  }
}

export async function getText(url: string): Promise<string | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    return response.ok ? await response.text() : null;
  } catch {
    return null;
  }
}

export function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [name, value] = line.split(' ');
    if (name && value !== undefined) values.set(name, Number(value));
  }
  return values;
}

export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
