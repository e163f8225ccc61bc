// A 2xx is durable: SIGKILL right after the response loses nothing. SIGTERM lets in-flight requests finish.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EntityName } from '@eggmesh/schema';
import { dataFiles, openPrimaryStore } from '@eggmesh/store-sqlite';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STARTUP_MS } from '../../../infra/test/patience.js';
import { freePort } from '../../../infra/test/process.js';
import { type Payload, tempDir } from './helpers.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const serverJs = join(root, 'services/write-api/dist/server.js');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

beforeAll(() => {
  // `pnpm test` builds before it tests. Build here only when there is no build at all: rebuilding
  // shared dist folders while other test files run processes from them would race with those.
  // After changing sources, run `pnpm run build` (or `npx tsc -b services/write-api`) before this file.
  const build = (...flags: string[]) =>
    execFileSync(process.execPath, [tsc, '-b', ...flags, 'services/write-api'], {
      cwd: root,
      stdio: 'pipe',
      timeout: 80_000,
    });
  if (existsSync(serverJs)) return;
  build();
  // A leftover tsbuildinfo makes tsc -b skip outputs deleted by hand.
  if (!existsSync(serverJs)) build('--force');
  expect(existsSync(serverJs), 'services/write-api/dist/server.js after the build').toBe(true);
}, 180_000);

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  readonly output: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: Server[] = [];

afterEach(() => {
  for (const s of running.splice(0))
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
});

async function startServer(dataDir: string): Promise<Server> {
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('EGGMESH_') && !k.endsWith('_PORT')) env[k] = v;
  }
  Object.assign(env, {
    EGGMESH_DATA_DIR: dataDir,
    EGGMESH_HOST: '127.0.0.1',
    WRITE_API_PORT: String(port),
    EGGMESH_LOG_LEVEL: 'warn',
  });
  const child = spawn(process.execPath, [serverJs], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const server: Server = { child, port, url: `http://127.0.0.1:${port}`, output: () => out, exited };
  running.push(server);
  const deadline = Date.now() + STARTUP_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`write-api exited with ${child.exitCode}:\n${out}`);
    try {
      const res = await fetch(`${server.url}/health`);
      if (res.status === 200) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`write-api did not become healthy:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const farm = (i: number) => ({ name: `Farm ${i}`, farm_type: 'homestead', zone: 'west', owner: `o${i}` });
const container = (i: number) => ({
  name: `Fridge ${i}`,
  container_type: 'fridge',
  capacity: 10 + i,
  zone: 'east',
});
const deposit = (i: number) => ({
  container_id: randomUUID(),
  source_type: 'farm',
  source_id: randomUUID(),
  eggs: 1 + i,
  timestamp: new Date(Date.UTC(2026, 1, 1, 0, 0, i % 60)).toISOString(),
});

/** The i-th request of a mixed workload: mostly single creates, every fifth a bulk of three. */
function requestFor(i: number): { entity: EntityName; url: string; body: unknown } {
  const kinds = [
    ['farm', farm],
    ['container', container],
    ['storage_deposit', deposit],
  ] as const;
  const [entity, make] = kinds[i % kinds.length]!;
  if (i % 5 === 0) {
    // Half the bulks carry client ids.
    const items = [0, 1, 2].map((k) => ({
      ...make(i * 10 + k),
      ...(i % 2 === 0 ? { id: randomUUID() } : {}),
    }));
    return { entity, url: `/${entity}/api/bulk`, body: items };
  }
  const item = i % 7 === 0 ? { ...make(i), id: randomUUID() } : make(i);
  return { entity, url: `/${entity}/api`, body: item };
}

interface Ack {
  readonly entity: EntityName;
  readonly rows: Payload[];
  readonly position: number;
}

async function post(server: Server, i: number): Promise<Ack> {
  const { entity, url, body } = requestFor(i);
  const res = await fetch(`${server.url}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST ${url} answered ${res.status}: ${text}`);
  const parsed = JSON.parse(text) as Payload | Payload[];
  const rows = Array.isArray(parsed) ? parsed : [parsed];
  // The response is the payload sent plus an id.
  const sent = Array.isArray(body) ? body : [body];
  for (const [k, row] of rows.entries()) expect(row).toEqual({ ...(sent[k] as Payload), id: row.id });
  return { entity, rows, position: Number(res.headers.get('x-log-position')) };
}

/** Reopens the data directory after the process died and checks every acknowledged write. */
async function verify(dataDir: string, acks: readonly Ack[], exactHead: boolean) {
  const store = openPrimaryStore({ file: dataFiles(dataDir).primary });
  try {
    const head = await store.log.head();
    const lastAck = Math.max(...acks.map((a) => a.position));
    if (exactHead) expect(head).toBe(lastAck);
    else expect(head).toBeGreaterThanOrEqual(lastAck);
    let rows = 0;
    for (const ack of acks) {
      for (const row of ack.rows) {
        const { id, ...payload } = row;
        const stored = await store.get(ack.entity, id as string);
        expect(stored, `${ack.entity} ${id} (acknowledged at position ${ack.position})`).not.toBeNull();
        expect(stored!.payload).toEqual(payload);
        rows++;
      }
    }
    // The log is gapless and holds every acknowledged change.
    const log = await store.log.read(0, head + 10);
    expect(log.map((e) => e.position)).toEqual(Array.from({ length: head }, (_, k) => k + 1));
    const logged = new Set(log.map((e) => `${e.entity}/${e.id}`));
    for (const ack of acks)
      for (const row of ack.rows) expect(logged.has(`${ack.entity}/${row.id}`)).toBe(true);
    return { head, rows };
  } finally {
    await store.close();
  }
}

describe('write-api process durability', () => {
  it('SIGKILL right after the last 2xx loses no acknowledged write', {
    timeout: STARTUP_MS + 60_000,
  }, async () => {
    const dir = tempDir('eggmesh-durability-');
    const server = await startServer(dir);
    const total = 200;
    let answered = 0;
    const acks = await Promise.all(
      Array.from({ length: total }, (_, i) =>
        post(server, i).then((ack) => {
          // Kill the process the moment the last response arrives: nothing may be left to flush.
          if (++answered === total) server.child.kill('SIGKILL');
          return ack;
        }),
      ),
    );
    const { signal } = await server.exited;
    expect(signal).toBe('SIGKILL');
    expect(acks).toHaveLength(total);
    // Each response's position is distinct, and together they cover the whole log.
    expect(new Set(acks.map((a) => a.position)).size).toBe(total);
    const { head, rows } = await verify(dir, acks, true);
    expect(head).toBe(rows);
    expect(rows).toBe(total + 2 * Math.ceil(total / 5));
  });

  it('SIGKILL in the middle of a stream of writes keeps every acknowledged one', {
    timeout: STARTUP_MS + 60_000,
  }, async () => {
    const dir = tempDir('eggmesh-durability-');
    const server = await startServer(dir);
    const acks: Ack[] = [];
    let killed = false;
    let next = 0;
    const worker = async () => {
      while (!killed) {
        const i = next++;
        try {
          const ack = await post(server, i);
          if (killed) {
            // Answered after the kill was sent: it may or may not be there; not counted as acknowledged.
            continue;
          }
          acks.push(ack);
          if (acks.length >= 300) {
            killed = true;
            server.child.kill('SIGKILL');
          }
        } catch (error) {
          if (!killed) throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect((await server.exited).signal).toBe('SIGKILL');
    expect(acks.length).toBeGreaterThanOrEqual(300);
    await verify(dir, acks, false);
  });
});

/** A POST whose body arrives in two halves, `gap` apart: in flight for as long as we like. */
function slowPost(server: Server, body: Payload, release: Promise<void>, agent: Agent) {
  const text = JSON.stringify(body);
  const cut = Math.floor(text.length / 2);
  let sentFirstHalf!: () => void;
  const started = new Promise<void>((resolve) => {
    sentFirstHalf = resolve;
  });
  const done = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        path: '/farm/api',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          data += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('error', reject);
    req.write(text.slice(0, cut), () => sentFirstHalf());
    void release.then(() => req.end(text.slice(cut)));
  });
  return { started, done };
}

describe('write-api graceful shutdown', () => {
  it('SIGTERM lets in-flight requests finish with 2xx, closes the store and exits 0', {
    timeout: STARTUP_MS + 60_000,
  }, async () => {
    const dir = tempDir('eggmesh-shutdown-');
    const server = await startServer(dir);
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const bodies = Array.from({ length: 5 }, (_, i) => ({ ...farm(i), id: randomUUID() }));
    // Like a proxy or a pooling client: connections stay open for reuse after each response.
    const agent = new Agent({ keepAlive: true, timeout: 60_000 });
    const inFlight = bodies.map((b) => slowPost(server, b, released, agent));
    await Promise.all(inFlight.map((r) => r.started));
    // Let the server read the headers and the first half of each body.
    await new Promise((r) => setTimeout(r, 200));

    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect(server.child.exitCode, 'must wait for the in-flight requests').toBeNull();
    // No new work is taken while shutting down.
    const late = await fetch(`${server.url}/health`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);

    release();
    const results = await Promise.all(inFlight.map((r) => r.done));
    for (const [k, r] of results.entries()) {
      expect(r.status, r.body).toBe(201);
      expect(JSON.parse(r.body)).toEqual(bodies[k]);
    }
    // Connections kept alive by the client do not hold the shutdown up: one that did would keep the
    // process until the shutdown timeout, which exits 1.
    const exit = await server.exited;
    agent.destroy();
    expect(exit, server.output()).toEqual({ code: 0, signal: null });
    // The database was closed cleanly: SQLite checkpoints and removes the WAL when its last connection closes.
    expect(existsSync(`${dataFiles(dir).primary}-wal`)).toBe(false);

    const store = openPrimaryStore({ file: dataFiles(dir).primary });
    try {
      expect(await store.log.head()).toBe(bodies.length);
      for (const { id, ...payload } of bodies)
        expect((await store.get('farm', id))?.payload).toEqual(payload);
    } finally {
      await store.close();
    }
  });

  it('SIGINT on an idle server exits 0', { timeout: STARTUP_MS + 30_000 }, async () => {
    const dir = tempDir('eggmesh-shutdown-');
    const server = await startServer(dir);
    expect((await post(server, 1)).position).toBe(1);
    server.child.kill('SIGINT');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});
