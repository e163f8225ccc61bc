import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp as buildReadApi } from '@eggmesh/read-api';
import { CORS_METHODS, loadConfig, rateLimit } from '@eggmesh/service-kit';
import {
  dataFiles,
  openPrimaryStore,
  openReadStore,
  ProjectionReader,
  SqliteReadStore,
} from '@eggmesh/store-sqlite';
import { buildApp as buildWriteApi } from '@eggmesh/write-api';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// A raw socket client: what the HTTP parser refuses never comes from fetch.
import { raw } from '../../../infra/test/raw-client.js';

const farm = { name: 'Header Farm', farm_type: 'local_farm', zone: 'north', owner: 'Ann' };

interface Stack {
  readonly write: FastifyInstance;
  readonly read: FastifyInstance;
  readonly urls: { readonly write: string; readonly read: string };
  close(): Promise<void>;
}

/**
 * The write-api and the read-api (the public port, forwarding writes to the write-api) over one temp
 * data dir, each listening on a free port.
 */
async function startStack(
  env: Record<string, string> = {},
  readEnv: Record<string, string> = {},
): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-sec-'));
  const base = { EGGMESH_DATA_DIR: dir, EGGMESH_LOG_LEVEL: 'silent', ...env };
  const config = loadConfig(base);
  const files = dataFiles(dir);
  const primary = openPrimaryStore({ file: files.primary });
  const reader = new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir));
  const write = await buildWriteApi({ config, primary, reader });
  const address = async (app: FastifyInstance) => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const a = app.server.address();
    if (a === null || typeof a === 'string') throw new Error('no port');
    return `http://127.0.0.1:${a.port}`;
  };
  const writeUrl = await address(write);
  const readStore = openReadStore(dir);
  const read = buildReadApi({
    config: loadConfig({ ...base, EGGMESH_WRITE_API_URL: writeUrl, ...readEnv }),
    store: readStore,
  });
  const readUrl = await address(read);
  return {
    write,
    read,
    urls: { write: writeUrl, read: readUrl },
    async close() {
      await read.close();
      await write.close();
      await readStore.close();
      await reader.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const expectSecurityHeaders = (headers: Headers, what: string) => {
  expect(headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(headers.get('x-frame-options'), what).toBe('DENY');
  expect(headers.get('referrer-policy'), what).toBe('no-referrer');
  const csp = headers.get('content-security-policy') ?? '';
  expect(csp, what).toMatch(/(^|; )default-src 'self'(;|$)/);
  expect(csp, what).toMatch(/(^|; )script-src 'self'(;|$)/);
  expect(csp, what).toMatch(/(^|; )style-src 'self' 'unsafe-inline'(;|$)/);
  expect(csp, what).toMatch(/(^|; )frame-ancestors 'none'(;|$)/);
};

describe('security headers, CORS and metrics on every service', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack();
  });
  afterAll(async () => s.close());

  it('every response carries nosniff, frame and referrer policies and the CSP: pages, JSON, 404s, errors, proxied', async () => {
    const requests: [string, RequestInit?][] = [
      [`${s.urls.write}/health`],
      [`${s.urls.write}/docs/`],
      [`${s.urls.write}/nowhere`],
      [
        `${s.urls.write}/farm/api`,
        { method: 'POST', body: '{oops', headers: { 'content-type': 'application/json' } },
      ],
      [`${s.urls.write}/metrics`],
      [`${s.urls.read}/graphiql`],
      [
        `${s.urls.read}/graphql`,
        { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } },
      ],
      [`${s.urls.read}/nowhere`],
      [`${s.urls.read}/health`],
      [`${s.urls.read}/farm/api`],
      [
        `${s.urls.read}/farm/api`,
        { method: 'POST', body: '{oops', headers: { 'content-type': 'application/json' } },
      ],
    ];
    for (const [url, init] of requests) {
      const res = await fetch(url, init);
      await res.arrayBuffer();
      expectSecurityHeaders(res.headers, `${init?.method ?? 'GET'} ${url} (${res.status})`);
    }
    const page = await fetch(`${s.urls.read}/graphiql`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    await page.arrayBuffer();
  });

  it('answers what the HTTP parser refuses in the error format and closes, on the write-api and the read-api', async () => {
    const requests = {
      EGGMESH_BAD_REQUEST: 'GET /farm/api HTTP/1.1\r\nHost: x\r\nnot a header line\r\n\r\n',
      EGGMESH_HEADERS_TOO_LARGE: `GET /farm/api HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(300_000)}\r\n\r\n`,
    };
    for (const url of [s.urls.write, s.urls.read]) {
      for (const [code, text] of Object.entries(requests)) {
        const answer = await raw(Number(new URL(url).port), text);
        const [head = '', body = ''] = answer.split('\r\n\r\n');
        const status = code === 'EGGMESH_BAD_REQUEST' ? 400 : 431;
        expect(head, `${code} ${url}`).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
        expect(head.toLowerCase(), url).toContain('connection: close');
        expect(head.toLowerCase(), url).toContain('content-type: application/json');
        expect(JSON.parse(body), url).toMatchObject({ code });
      }
    }
  });

  it('answers a browser preflight for every method and header the API uses, on the write-api and the public port', async () => {
    const targets = [
      `${s.urls.write}/farm/api/00000000-0000-4000-8000-000000000001`,
      `${s.urls.read}/graphql`,
      `${s.urls.read}/farm/api/00000000-0000-4000-8000-000000000001`,
    ];
    for (const url of targets) {
      for (const method of ['PUT', 'DELETE', 'PATCH', 'POST']) {
        const res = await fetch(url, {
          method: 'OPTIONS',
          headers: {
            origin: 'http://app.test',
            'access-control-request-method': method,
            'access-control-request-headers': 'authorization, content-type, x-min-position',
          },
        });
        await res.arrayBuffer();
        expect(res.status, `${method} ${url}`).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        const methods = (res.headers.get('access-control-allow-methods') ?? '').split(/, */);
        for (const m of CORS_METHODS) expect(methods, url).toContain(m);
        const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/, */);
        for (const h of ['authorization', 'content-type', 'x-min-position'])
          expect(allowed, url).toContain(h);
      }
    }
  });

  it('exposes x-log-position, x-next-cursor, x-request-id and retry-after to pages', async () => {
    const created = await fetch(`${s.urls.read}/farm/api`, {
      method: 'POST',
      headers: { origin: 'http://app.test', 'content-type': 'application/json' },
      body: JSON.stringify(farm),
    });
    expect(created.status).toBe(201);
    await created.arrayBuffer();
    expect(created.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = (created.headers.get('access-control-expose-headers') ?? '').split(/, */);
    for (const h of ['x-log-position', 'x-next-cursor', 'x-request-id', 'retry-after', 'www-authenticate']) {
      expect(exposed).toContain(h);
    }
    const query = await fetch(`${s.urls.read}/graphql`, {
      method: 'POST',
      headers: { origin: 'http://app.test', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ farms { id } }' }),
    });
    await query.arrayBuffer();
    expect(query.headers.get('access-control-expose-headers')).toContain('x-eggmesh-stale');
    // How long a read-your-writes read waited, for pages that time their reads.
    expect(query.headers.get('access-control-expose-headers')).toContain('server-timing');
  });

  it('serves Prometheus metrics per route pattern, with store timings and the Node process metrics', async () => {
    await fetch(`${s.urls.write}/farm/api/not-a-uuid`).then((r) => r.arrayBuffer());
    await fetch(`${s.urls.write}/farm/api/00000000-0000-4000-8000-00000000abcd`).then((r) => r.arrayBuffer());
    await fetch(`${s.urls.write}/no/such/path`).then((r) => r.arrayBuffer());
    await fetch(`${s.urls.write}/farm/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(farm),
    }).then((r) => r.arrayBuffer());
    const res = await fetch(`${s.urls.write}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(
      /^eggmesh_http_request_duration_seconds_count\{route="\/farm\/api\/:id",method="GET",status_class="4xx"\} 2$/m,
    );
    expect(text).toMatch(
      /^eggmesh_http_request_duration_seconds_count\{route="\/farm\/api",method="POST",status_class="2xx"\} \d+$/m,
    );
    expect(text).toMatch(
      /^eggmesh_http_request_duration_seconds_bucket\{le="0\.005",route="\/farm\/api",method="POST",status_class="2xx"\} \d+$/m,
    );
    expect(text).toMatch(
      /^eggmesh_http_request_duration_seconds_count\{route="\(unmatched\)",method="GET",status_class="4xx"\} [1-9]\d*$/m,
    );
    expect(text).toMatch(/^eggmesh_store_duration_seconds_count\{operation="commit"\} [1-9]\d*$/m);
    expect(text).toMatch(/^eggmesh_store_duration_seconds_count\{operation="get"\} [1-9]\d*$/m);
    expect(text).not.toContain('not-a-uuid');
    expect(text).not.toContain('abcd');
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }

    await fetch(`${s.urls.read}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ farms { id } }' }),
    }).then((r) => r.arrayBuffer());
    const read = await (await fetch(`${s.urls.read}/metrics`)).text();
    expect(read).toMatch(
      /^eggmesh_http_request_duration_seconds_count\{route="\/graphql",method="POST",status_class="2xx"\} [1-9]\d*$/m,
    );
    expect(read).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');

    // On the public port the REST reads count by their route, the forwarded writes by the write route's.
    await fetch(`${s.urls.read}/farm/api`).then((r) => r.arrayBuffer());
    await fetch(`${s.urls.read}/farm/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(farm),
    }).then((r) => r.arrayBuffer());
    const front = await (await fetch(`${s.urls.read}/metrics`)).text();
    expect(front).toMatch(
      /^eggmesh_http_request_duration_seconds_count\{route="\/farm\/api",method="GET",status_class="2xx"\} [1-9]\d*$/m,
    );
    expect(front).toMatch(
      /^eggmesh_http_request_duration_seconds_count\{route="\/:entity\/api",method="POST",status_class="2xx"\} [1-9]\d*$/m,
    );
    expect(front).toContain('# TYPE process_cpu_user_seconds_total counter');
  });
});

describe('CORS origins', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ EGGMESH_CORS_ORIGIN: 'http://a.test, http://b.test' });
  });
  afterAll(async () => s.close());

  it('answers only the listed origins', async () => {
    const preflight = (origin: string) =>
      fetch(`${s.urls.write}/farm/api`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'DELETE' },
      });
    const b = await preflight('http://b.test');
    await b.arrayBuffer();
    expect(b.headers.get('access-control-allow-origin')).toBe('http://b.test');
    const c = await preflight('http://c.test');
    await c.arrayBuffer();
    expect(c.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('rate limit (EGGMESH_RATE_LIMIT_PER_MIN)', () => {
  it('counts per client address in fixed one-minute windows and answers 429 with retry-after', async () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 10);
    const app = Fastify();
    rateLimit(app, 2, () => now);
    app.get('/x', async () => ({ ok: true }));
    app.get('/health', async () => ({ status: 'ok' }));
    const hit = (ip = '198.51.100.1', url = '/x') => app.inject({ method: 'GET', url, remoteAddress: ip });
    expect((await hit()).statusCode).toBe(200);
    expect((await hit()).statusCode).toBe(200);
    const refused = await hit();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('50');
    expect(refused.json()).toMatchObject({ code: 'EGGMESH_RATE_LIMITED' });
    expect((await hit('198.51.100.2')).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await hit('198.51.100.1', '/health')).statusCode).toBe(200);
    now += 50_000;
    expect((await hit()).statusCode).toBe(200);
    await app.close();
  });

  it('installs nothing when 0 (the default)', async () => {
    const app = Fastify();
    rateLimit(app, 0);
    app.get('/x', async () => ({ ok: true }));
    for (let i = 0; i < 50; i++)
      expect((await app.inject({ method: 'GET', url: '/x' })).statusCode).toBe(200);
    await app.close();
  });

  it('limits the write-api and counts the client the public port forwards for, not the public port', async () => {
    const s = await startStack({ EGGMESH_RATE_LIMIT_PER_MIN: '3' }, { EGGMESH_RATE_LIMIT_PER_MIN: '0' });
    try {
      const get = (client: string) =>
        fetch(`${s.urls.read}/farm/api`, {
          method: 'POST',
          headers: { 'x-forwarded-for': client, 'content-type': 'application/json' },
          body: JSON.stringify(farm),
        }).then(async (r) => ({
          status: r.status,
          retryAfter: r.headers.get('retry-after'),
          body: (await r.json()) as { code?: string },
        }));
      // 7 requests span at most one minute boundary, so one window holds 4 of them: a 429 must come.
      const statuses: number[] = [];
      let refused: Awaited<ReturnType<typeof get>> | undefined;
      for (let i = 0; i < 7 && refused === undefined; i++) {
        const answer = await get('203.0.113.1');
        statuses.push(answer.status);
        if (answer.status === 429) refused = answer;
      }
      expect(statuses.slice(0, 3)).toEqual([201, 201, 201]);
      expect(refused?.body.code).toBe('EGGMESH_RATE_LIMITED');
      expect(Number(refused?.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(refused?.retryAfter)).toBeLessThanOrEqual(60);
      expect((await get('203.0.113.2')).status).toBe(201);
      const health = await fetch(`${s.urls.write}/health`);
      expect(health.status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
