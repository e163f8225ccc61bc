import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Config, parseConfig } from '@eggmesh/service-kit';
import type { PrimaryStore, ReadStore, WriteOperation } from '@eggmesh/store';
import { openMongoPrimaryStore, openMongoReadStore } from '@eggmesh/store-mongodb';
import { dataFiles, openPrimaryStore, openReadStore } from '@eggmesh/store-sqlite';
import type { FastifyInstance } from 'fastify';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { STARTUP_MS } from '../../../infra/test/patience.js';
import { freePort } from '../../../infra/test/process.js';
import { sharedMongodbUri } from '../../../infra/test/shared-servers.js';
import { buildApp } from '../src/index.js';

export type Tier = 'sqlite' | 'mongodb';

/** A read-api listening on a free port over one tier's stores, with the real projector behind it. */
export interface LiveStack {
  readonly app: FastifyInstance;
  /** `ws://127.0.0.1:<port>/graphql` */
  readonly wsUrl: string;
  readonly httpUrl: string;
  /**
   * Commits entity writes and waits until the projector process has projected them; answers their
   * log position (the checkpoint of the projector's commit, as each write is projected on its own).
   */
  write(operations: WriteOperation[]): Promise<number>;
  readonly read: ReadStore;
  close(): Promise<void>;
}

/** The projector service as `pnpm start` runs it (built by `pnpm build`). */
const projectorMain = fileURLToPath(new URL('../../projector/dist/main.js', import.meta.url));

interface Stores {
  readonly primary: PrimaryStore;
  readonly read: ReadStore;
  readonly env: Record<string, string>;
  dispose(): Promise<void>;
}

async function openStores(tier: Tier): Promise<Stores> {
  if (tier === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-live-'));
    const primary = openPrimaryStore({ file: dataFiles(dir).primary });
    return {
      primary,
      read: openReadStore(dir),
      env: { EGGMESH_DATA_DIR: dir },
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const uri = await sharedMongodbUri();
  const dbName = `t_live_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const primary = await openMongoPrimaryStore({ uri, dbName });
  const cleaner = await openMongoPrimaryStore({ uri, dbName });
  return {
    primary,
    read: await openMongoReadStore({ uri, dbName }),
    env: { EGGMESH_STORE: 'mongodb', EGGMESH_MONGODB_URI: uri, EGGMESH_MONGODB_DB: dbName },
    dispose: async () => {
      try {
        await cleaner.client.db(dbName).dropDatabase();
      } finally {
        await cleaner.close();
      }
    },
  };
}

/** Starts the projector service over the stores' data; resolves once it serves /health. */
async function startProjector(env: Record<string, string>): Promise<ChildProcess> {
  if (!existsSync(projectorMain)) throw new Error('run `pnpm build` first');
  const port = await freePort();
  const output: string[] = [];
  const child = spawn(process.execPath, [projectorMain], {
    env: { ...process.env, ...env, PROJECTOR_PORT: String(port), EGGMESH_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => output.push(String(d)));
  child.stderr?.on('data', (d) => output.push(String(d)));
  const deadline = Date.now() + STARTUP_MS;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return child;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the projector did not start:\n${output.join('')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface LiveOptions {
  readonly env?: Record<string, string>;
  /** The subscription bounds (constants in the product), lowered to reach them in a test. */
  readonly subscriptions?: Partial<Config['subscriptions']>;
}

export async function liveStack(tier: Tier, options: LiveOptions = {}): Promise<LiveStack> {
  const stores = await openStores(tier);
  const parsed = parseConfig({ EGGMESH_LOG_LEVEL: 'silent', ...stores.env, ...options.env });
  const config = { ...parsed, subscriptions: { ...parsed.subscriptions, ...options.subscriptions } };
  const app = buildApp({ config, store: stores.read });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const projector = await startProjector(stores.env);
  return {
    app,
    read: stores.read,
    wsUrl: `ws://127.0.0.1:${port}/graphql`,
    httpUrl: `http://127.0.0.1:${port}`,
    async write(operations) {
      const { position } = await stores.primary.commit(operations);
      const deadline = Date.now() + STARTUP_MS;
      while ((await stores.read.projectionPosition()) < position) {
        if (Date.now() > deadline) throw new Error(`the projector did not reach ${position}`);
        await stores.read.changed(500);
      }
      return position;
    },
    async close() {
      const exited = new Promise((resolve) => projector.once('exit', resolve));
      projector.kill('SIGTERM');
      await exited;
      await app.close();
      await stores.read.close();
      await stores.primary.close();
      await stores.dispose();
    },
  };
}

/** A graphql-ws client (the `graphql-transport-ws` protocol) of the read-api. */
export function wsClient(url: string, connectionParams?: Record<string, unknown>): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    ...(connectionParams ? { connectionParams } : {}),
  });
}

/** What one subscription received so far, and a way to wait for more. */
export interface Received<T> {
  readonly values: T[];
  readonly errors: unknown[];
  /** Resolves once `count` values arrived (fails after `ms` with what arrived). */
  until(count: number, ms?: number): Promise<T[]>;
  /** Resolves with the first value that matches (fails after `ms` with what arrived). */
  untilMatch(match: (value: T) => boolean, ms?: number): Promise<T>;
  /** Resolves on the first error. */
  failed(ms?: number): Promise<unknown>;
  stop(): void;
}

export function collect<T>(
  client: Client,
  query: string,
  variables: Record<string, unknown> = {},
): Received<T> {
  const values: T[] = [];
  const errors: unknown[] = [];
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const stop = client.subscribe<T>(
    { query, variables },
    {
      next: (value) => {
        if (value.errors) errors.push(value.errors);
        else values.push(value.data as T);
        wake();
      },
      error: (error) => {
        errors.push(error);
        wake();
      },
      complete: wake,
    },
  );
  const wait = async (done: () => boolean, ms: number, what: () => string) => {
    const deadline = Date.now() + ms;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out: ${what()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  return {
    values,
    errors,
    async until(count, ms = 20_000) {
      await wait(
        () => values.length >= count || errors.length > 0,
        ms,
        () => `${values.length} of ${count} values: ${JSON.stringify(values)}`,
      );
      if (values.length < count) throw new Error(`subscription failed: ${JSON.stringify(errors)}`);
      return values;
    },
    async untilMatch(match, ms = 20_000) {
      await wait(
        () => values.some(match) || errors.length > 0,
        ms,
        () => `no match among ${JSON.stringify(values)}`,
      );
      const found = values.find(match);
      if (found === undefined) throw new Error(`subscription failed: ${JSON.stringify(errors)}`);
      return found;
    },
    async failed(ms = 20_000) {
      await wait(
        () => errors.length > 0,
        ms,
        () => `no error; values ${JSON.stringify(values)}`,
      );
      return errors[0];
    },
    stop,
  };
}
