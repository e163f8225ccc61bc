import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { haproxyConfig, sideOf } from '@eggmesh/rest';
import { parseConfig } from '@eggmesh/service-kit';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { freePort, type RunningStack, startStack, until } from './helpers.js';

// The public port as `pnpm start` runs it (the read-api, forwarding writes with @fastify/reply-from),
// attacked the way hostile clients attacked the hand-written proxy it replaces; then HAProxy with the
// generated configuration in front of the same real services.

// Real processes on a shared machine: room for a slow one (the limits below are what is asserted).
vi.setConfig({ testTimeout: 90_000 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const farm = (name: string) => JSON.stringify({ name, farm_type: 'local_farm', zone: 'north' });

/** Resident memory of a process, in MiB. */
const rssMiB = (pid: number): number => {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(line?.[1] ?? 0) / 1024;
};

const connected = (port: number, localAddress?: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });

describe('the public port under hostile clients (pnpm start)', () => {
  let stack: RunningStack;
  let port = 0;
  let publicPid = 0;

  beforeAll(async () => {
    // These clients all come from loopback, which the default trusts as a front door (and exempts from
    // the per-client connection cap): believe nobody, so that each loopback address is a client.
    stack = await startStack({ EGGMESH_TRUSTED_PROXIES: 'none' });
    port = Number(new URL(stack.urls.public).port);
    const health = (await (await fetch(`${stack.urls.public}/health`)).json()) as {
      service: string;
      pid: number;
    };
    expect(health.service).toBe('read-api');
    publicPid = health.pid;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it.each([
    ['plain requests', ''],
    ['a Connection: x-foo header', 'Connection: x-foo\r\nX-Foo: 1\r\n'],
  ])(
    'a client that sends forwarded writes and never reads the answers (%s) does not grow the public process',
    async (_label, extra) => {
      const request = Buffer.from(
        `POST /farm/api HTTP/1.1\r\nHost: x\r\n${extra}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
      );
      const before = rssMiB(publicPid);
      const socket = await connected(port);
      socket.on('error', () => undefined);
      let closedByServer = false;
      socket.once('close', () => {
        closedByServer = true;
      });
      // Never read: no 'data' listener, the answers stay in the kernel's buffers and then in nobody's.
      socket.pause();
      let accepted = 0;
      const acceptedAt: number[] = [];
      const deadline = Date.now() + 8_000;
      while (Date.now() < deadline && !closedByServer) {
        // As fast as the server takes them: write while the socket accepts, else wait for it to drain.
        if (socket.write(request)) {
          accepted += request.length;
          continue;
        }
        await Promise.race([new Promise((r) => socket.once('drain', r)), sleep(250)]);
        acceptedAt.push(socket.bytesWritten - socket.writableLength);
      }
      const peak = rssMiB(publicPid);
      const last = acceptedAt.slice(-8);
      socket.destroy();
      // The server stopped taking its requests: it closed the connection, or the last 2 s moved nothing.
      const stalled = last.length === 8 && last[7]! - last[0]! < 64 * 1024;
      expect(closedByServer || stalled, `accepted ${accepted} bytes, then ${last.join(', ')}`).toBe(true);
      // Bounded: what one such client costs the process is its socket's buffers, not its requests.
      expect(peak - before, `RSS ${before.toFixed(0)} → ${peak.toFixed(0)} MiB`).toBeLessThan(64);
      // And everyone else is still served.
      const ok = await fetch(`${stack.urls.public}/farm/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: farm('after the silent client'),
      });
      expect(ok.status).toBe(201);
    },
  );

  it('a client that stops reading mid-answer and goes away leaves no poisoned pooled connection: the next write gets its 201 at once, committed once', async () => {
    // Forwarded answers (the Swagger UI bundle) left unread by clients that then go away. An answer larger
    // than every buffer on the way, which stalls the write-api's connection itself, is driven in
    // services/read-api/test/forward.int.spec.ts.
    const bundle = await fetch(`${stack.urls.public}/docs/static/swagger-ui-bundle.js`);
    const size = (await bundle.arrayBuffer()).byteLength;
    expect(bundle.status).toBe(200);
    expect(size).toBeGreaterThan(1024 * 1024);
    const paused: Socket[] = [];
    for (let i = 0; i < 16; i++) {
      const socket = await connected(port);
      socket.on('error', () => undefined);
      socket.pause();
      socket.write('GET /docs/static/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\n\r\n');
      paused.push(socket);
    }
    await sleep(1500);
    for (const socket of paused) socket.destroy();
    const name = `after the paused readers ${Date.now()}`;
    for (let i = 0; i < 20; i++) {
      // A write stuck behind the paused readers would never be answered: the abort fails it.
      const created = await fetch(`${stack.urls.public}/farm/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: farm(`${name} ${i}`),
        signal: AbortSignal.timeout(10_000),
      });
      expect(created.status, `write ${i}`).toBe(201);
    }
    // Each write committed exactly once.
    const all = (await (await fetch(`${stack.urls.write}/farm/api?limit=10000`)).json()) as {
      name: string;
    }[];
    for (let i = 0; i < 20; i++)
      expect(
        all.filter((f) => f.name === `${name} ${i}`),
        `write ${i}`,
      ).toHaveLength(1);
  });

  it('one client holding more idle connections than a process accepts does not lock the others out', async () => {
    const flood: Socket[] = [];
    try {
      // From 127.0.0.1, as many as the default EGGMESH_HTTP_MAX_CONNECTIONS and more, held idle.
      for (let i = 0; i < 4200; i++) {
        const socket = connect({ port, host: '127.0.0.1' });
        socket.on('error', () => undefined);
        flood.push(socket);
        if (i % 200 === 199) await sleep(20);
      }
      await sleep(500);
      // Another client (another loopback address) is still served, on reads and on forwarded writes.
      for (let i = 0; i < 5; i++) {
        const socket = await connected(port, '127.0.0.2');
        const answer = await new Promise<string>((resolve) => {
          let text = '';
          socket.on('data', (chunk) => {
            text += String(chunk);
          });
          socket.on('close', () => resolve(text));
          socket.on('error', () => resolve(text));
          socket.write(
            `POST /farm/api HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${farm(`other ${i}`).length}\r\nConnection: close\r\n\r\n${farm(`other ${i}`)}`,
          );
        });
        expect(answer.slice(0, 12), `other client, request ${i}`).toBe('HTTP/1.1 201');
      }
    } finally {
      for (const socket of flood) socket.destroy();
    }
  });
});

const ensureTools = fileURLToPath(new URL('../../../infra/ensure-tools.sh', import.meta.url));

describe('HAProxy with the generated configuration in front of the real services', () => {
  let stack: RunningStack;
  let dir = '';
  const proxies: { child: ReturnType<typeof spawn>; output: string[] }[] = [];

  /** Starts HAProxy on a free port with the generated configuration (logging each request's backend). */
  async function haproxy(write: string, read: string): Promise<{ base: string; output: string[] }> {
    const port = await freePort();
    const config = parseConfig({ EGGMESH_BODY_LIMIT_BYTES: '1000' });
    const text = haproxyConfig({
      bind: `127.0.0.1:${port}`,
      write,
      read: [read],
      keepAliveTimeoutMs: config.http.keepAliveTimeoutMs,
      headersTimeoutMs: config.http.headersTimeoutMs,
      requestTimeoutMs: config.http.requestTimeoutMs,
      bodyLimitBytes: config.bodyLimitBytes,
      maxConnections: config.http.maxConnections,
      checkIntervalMs: 500,
    })
      .replace('global\n', 'global\n  log stdout format raw local0\n')
      .replace('defaults\n', 'defaults\n  log global\n  option httplog\n');
    const file = join(dir, `haproxy-${port}.cfg`);
    writeFileSync(file, text);
    const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    child.stdout?.on('data', (d) => output.push(String(d)));
    child.stderr?.on('data', (d) => output.push(String(d)));
    proxies.push({ child, output });
    const base = `http://127.0.0.1:${port}`;
    await until(
      async () => ((await fetch(`${base}/health`)).status > 0 ? true : undefined),
      15_000,
      () => output.join(''),
    );
    return { base, output };
  }

  beforeAll(async () => {
    execFileSync('bash', [ensureTools, 'haproxy'], { stdio: 'inherit' });
    dir = mkdtempSync(join(tmpdir(), 'eggmesh-haproxy-'));
    stack = await startStack();
  }, 180_000);
  afterAll(async () => {
    for (const { child } of proxies) child.kill('SIGKILL');
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('routes every request as the route table says, and a write reads back through REST and GraphQL', async () => {
    const { base, output } = await haproxy(new URL(stack.urls.write).host, new URL(stack.urls.public).host);
    // Until both servers passed their first check.
    await until(async () =>
      (await fetch(`${base}/farm/api`, { method: 'POST' })).status !== 503 ? true : undefined,
    );
    const created = await fetch(`${base}/farm/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: farm('Ferme « é »'),
    });
    expect(created.status).toBe(201);
    expect(Number(created.headers.get('x-log-position'))).toBeGreaterThan(0);
    const { id } = (await created.json()) as { id: string };
    const rest = await fetch(`${base}/farm/api/${id}`);
    expect(((await rest.json()) as { name: string }).name).toBe('Ferme « é »');
    const graph = await fetch(`${base}/farm/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ getById(id: "${id}") { name } }` }),
    });
    expect(await graph.json()).toEqual({ data: { getById: { name: 'Ferme « é »' } } });

    const requests = [
      ['POST', '/coop/api'],
      ['PUT', `/farm/api/${id}`],
      ['DELETE', '/hen/api/00000000-0000-4000-8000-000000000001'],
      ['POST', '/farm/api/bulk/read'],
      ['GET', '/openapi.json'],
      ['GET', '/docs/static/index.html'],
      ['GET', '/farm/api'],
      ['HEAD', `/farm/api/${id}`],
      ['POST', '/graphql'],
      ['GET', '/graphiql'],
      ['GET', '/'],
      ['GET', '/health'],
      ['GET', '/metrics'],
      ['GET', '/no/such/path'],
    ] as const;
    for (const [method, path] of requests) {
      const mark = `/${method}-${Math.random().toString(36).slice(2)}`;
      const before = output.join('').length;
      const response = await fetch(`${base}${path}${path.includes('?') ? '&' : '?'}m=${mark}`, {
        method,
        redirect: 'manual',
        ...(method === 'POST' || method === 'PUT'
          ? { headers: { 'content-type': 'application/json' }, body: '{}' }
          : {}),
      });
      await response.arrayBuffer();
      expect(response.status, `${method} ${path}`).toBeLessThan(500);
      const line = await until(async () =>
        output
          .join('')
          .slice(before)
          .split('\n')
          .find((l) => l.includes(mark)),
      );
      const backend = / (write|read)\/(write|read)-api-1 /.exec(line)?.[1];
      expect(backend, `${method} ${path}: ${line}`).toBe(sideOf(method, path));
    }
    // What comes back from the read side is the public port's own answer.
    const health = (await (await fetch(`${base}/health`)).json()) as { service: string };
    expect(health.service).toBe('read-api');
  });

  it('passes the WebSocket upgrade of /graphql: a subscription sees a write made through the proxy', async () => {
    const { base } = await haproxy(new URL(stack.urls.write).host, new URL(stack.urls.public).host);
    await until(async () =>
      (await fetch(`${base}/farm/api`, { method: 'POST' })).status !== 503 ? true : undefined,
    );
    const post = async (entity: string, body: unknown) => {
      const response = await fetch(`${base}/${entity}/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { id: string }).id;
    };
    const farmId = await post('farm', { name: 'tunnel', farm_type: 'homestead', zone: 'north' });
    const client = createClient({
      url: `${base.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
    });
    const seen: number[] = [];
    const done = new Promise<void>((resolve, reject) => {
      client.subscribe<{ farmOutput: { farmOutput: { total_hens: number } } }>(
        { query: `subscription { farmOutput(farm_id: "${farmId}") { position farmOutput { total_hens } } }` },
        {
          next: ({ data }) => {
            seen.push(data?.farmOutput.farmOutput.total_hens ?? -1);
            if (seen.includes(1)) resolve();
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    try {
      const coop = await post('coop', { name: 'c', farm_id: farmId, capacity: 5, coop_type: 'barn' });
      await post('hen', { name: 'h', coop_id: coop, breed: 'leghorn' });
      await done;
      expect(seen.at(-1)).toBe(1);
    } finally {
      await client.dispose();
    }
  });

  it('answers a declared body over the limit with 413 and the JSON error itself', async () => {
    const { base } = await haproxy(new URL(stack.urls.write).host, new URL(stack.urls.public).host);
    const response = await fetch(`${base}/farm/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: farm('x'.repeat(2000)),
    });
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({
      error: 'the request body is larger than 1000 bytes',
      code: 'EGGMESH_BODY_TOO_LARGE',
    });
  });

  it('answers 502 or 503 in the JSON shape, naming the service and never its address, when it is down', async () => {
    const dead = `127.0.0.1:${await freePort()}`;
    const { base } = await haproxy(dead, dead);
    for (const [path, method, service] of [
      ['/farm/api', 'POST', 'write-api'],
      ['/graphql', 'POST', 'read-api'],
    ] as const) {
      const response = await fetch(`${base}${path}`, { method, body: '{}' });
      expect([502, 503], path).toContain(response.status);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({
        error: `the ${service} did not answer`,
        code: 'EGGMESH_UPSTREAM_UNAVAILABLE',
      });
      expect(text).not.toContain(dead);
    }
  });
});
