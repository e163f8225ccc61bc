import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp as buildReadApi } from '@eggmesh/read-api';
import { applyHttpLimits, CORS_METHODS, parseConfig, serviceApp, servicePlugin } from '@eggmesh/service-kit';
import {
  dataFiles,
  openPrimaryStore,
  openReadStore,
  ProjectionReader,
  SqliteReadStore,
} from '@eggmesh/store-sqlite';
import { buildApp as buildWriteApi } from '@eggmesh/write-api';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { fetchPastOverload } from '../../../infra/test/overload.js';

// The services run in this test's process: every request here is sent as a patient client sends it.
const fetch = fetchPastOverload;

/**
 * Writes `text` to a fresh connection in one write and gives what came back before the server closed
 * (or `ms` passed): what the HTTP parser refuses never comes from fetch.
 */
const raw = (port: number, text: string, ms = 5000): Promise<string> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let got = '';
    socket.on('data', (chunk) => {
      got += chunk.toString('latin1');
    });
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
  });

const farm = { name: 'Header Farm', farm_type: 'local_farm', zone: 'north', owner: 'Ann' };

interface Stack {
  readonly write: FastifyInstance;
  readonly read: FastifyInstance;
  readonly urls: { readonly write: string; readonly read: string };
  close(): Promise<void>;
}

/** The write-api and read-api over one temp data dir, each listening on a free port. */
async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-sec-'));
  const base = { EGGMESH_DATA_DIR: dir, EGGMESH_LOG_LEVEL: 'silent', ...env };
  const config = parseConfig(base);
  const files = dataFiles(dir);
  const primary = openPrimaryStore({ file: files.primary });
  const reader = new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir));
  const write = await buildWriteApi({ config, primary, reader });
  const address = async (app: FastifyInstance) => {
    applyHttpLimits(app.server, config, app.log);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const a = app.server.address();
    if (a === null || typeof a === 'string') throw new Error('no port');
    return `http://127.0.0.1:${a.port}`;
  };
  const writeUrl = await address(write);
  const readStore = openReadStore(dir);
  // The read-api forwards REST writes to this write-api, as the stack wires them.
  const read = buildReadApi({
    config: parseConfig({ ...base, EGGMESH_WRITE_API_URL: writeUrl }),
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

const expectSecurityHeaders = (headers: Headers, what: string, page: boolean) => {
  expect(headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(headers.get('x-frame-options'), what).toBe('DENY');
  expect(headers.get('cross-origin-resource-policy'), what).toBe('same-origin');
  expect(headers.get('strict-transport-security'), what).toBeNull();
  // The headers that steer a document: on the pages only.
  const documentOnly = {
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'origin-agent-cluster': '?1',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0',
  };
  for (const [name, value] of Object.entries(documentOnly)) {
    expect(headers.get(name), `${what}: ${name}`).toBe(page ? value : null);
  }
  const csp = headers.get('content-security-policy') ?? '';
  expect(csp, what).toMatch(/(^|;)frame-ancestors 'none'(;|$)/);
  if (page) {
    // The pages load their scripts, styles, fonts and images from their own server only.
    expect(csp, what).toMatch(/(^|;)default-src 'self'(;|$)/);
    expect(csp, what).toMatch(/(^|;)script-src 'self'(;|$)/);
    expect(csp, what).toMatch(/(^|;)style-src 'self' 'unsafe-inline'(;|$)/);
  } else {
    // Nothing else is a document: nothing may load from it.
    expect(csp, what).toMatch(/^default-src 'none';/);
    expect(csp, what).not.toContain("'self'");
  }
};

describe('security headers, CORS and metrics on every service', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ EGGMESH_CORS_ORIGIN: '*' });
  });
  afterAll(async () => s.close());

  it('every response carries nosniff, the frame and resource policies and a CSP: the pages theirs and the document headers, JSON, 404s and errors the strict one and no more', async () => {
    const requests: [string, RequestInit | undefined, boolean][] = [
      [`${s.urls.write}/health`, undefined, false],
      [`${s.urls.write}/docs/`, undefined, true],
      [`${s.urls.write}/nowhere`, undefined, false],
      [
        `${s.urls.write}/farm/api`,
        { method: 'POST', body: '{oops', headers: { 'content-type': 'application/json' } },
        false,
      ],
      [`${s.urls.write}/metrics`, undefined, false],
      [`${s.urls.read}/graphiql`, undefined, true],
      [
        `${s.urls.read}/graphql`,
        { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } },
        false,
      ],
      [`${s.urls.read}/nowhere`, undefined, false],
      [`${s.urls.read}/health`, undefined, false],
    ];
    for (const [url, init, page] of requests) {
      const res = await fetch(url, init);
      await res.arrayBuffer();
      expectSecurityHeaders(res.headers, `${init?.method ?? 'GET'} ${url} (${res.status})`, page);
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

  it('gives a long bearer token the same answer at the public port and at the write-api: one header limit', async () => {
    const write = (url: string, bytes: number) =>
      fetch(`${url}/farm/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${'a'.repeat(bytes)}` },
        body: JSON.stringify(farm),
      }).then(async (res) => ({ status: res.status, code: ((await res.json()) as { code?: string }).code }));
    for (const bytes of [14 * 1024, 30 * 1024, 80 * 1024]) {
      const direct = await write(s.urls.write, bytes);
      const forwarded = await write(s.urls.read, bytes);
      expect(forwarded, `${bytes} bytes`).toEqual(direct);
      expect(direct.status, `${bytes} bytes`).toBe(bytes > 60_000 ? 431 : 201);
    }
  });

  it('refuses a body in a charset other than UTF-8 (415), on REST and GraphQL, at both ports', async () => {
    const post = (url: string, type: string, body: string | Buffer) =>
      fetch(url, { method: 'POST', headers: { 'content-type': type }, body });
    for (const url of [`${s.urls.write}/farm/api`, `${s.urls.read}/farm/api`, `${s.urls.read}/graphql`]) {
      const json = url.endsWith('/graphql')
        ? JSON.stringify({ query: '{ farms { id } }' })
        : JSON.stringify(farm);
      for (const charset of ['latin1', 'iso-8859-1', 'utf-16', '"windows-1252"']) {
        const res = await post(url, `application/json; charset=${charset}`, Buffer.from(json, 'latin1'));
        const body = (await res.json()) as { code?: string; errors?: { extensions?: { code?: string } }[] };
        expect(res.status, `${charset} ${url}`).toBe(415);
        // GraphQL names every refused HTTP request EGGMESH_GRAPHQL_BAD_REQUEST, with the HTTP status.
        expect(body.code ?? body.errors?.[0]?.extensions?.code, url).toBe(
          url.endsWith('/graphql') ? 'EGGMESH_GRAPHQL_BAD_REQUEST' : 'EGGMESH_UNSUPPORTED_MEDIA_TYPE',
        );
      }
      const ok = await post(url, 'application/json; charset=UTF-8', json);
      await ok.arrayBuffer();
      expect(ok.status, url).toBe(url.endsWith('/graphql') ? 200 : 201);
    }
  });

  it('refuses what no real record holds, naming the field, at both ports', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['/farm/api', { ...farm, name: 'Sunny\u0000Acres' }, 'name'],
      ['/farm/api', { ...farm, name: 'Sunny \uD800' }, 'name'],
      ['/farm/api', { ...farm, name: '   ' }, 'name'],
      [
        '/hen/api',
        {
          name: 'Hetty',
          coop_id: '00000000-0000-4000-8000-000000000001',
          breed: 'sussex',
          dob: '9999-12-31',
        },
        'dob',
      ],
      [
        '/lay_report/api',
        {
          hen_id: '00000000-0000-4000-8000-000000000001',
          coop_id: '00000000-0000-4000-8000-000000000002',
          farm_id: '00000000-0000-4000-8000-000000000003',
          eggs: 1,
          timestamp: '0000-01-01T00:00:00Z',
        },
        'timestamp',
      ],
    ];
    for (const base of [s.urls.write, s.urls.read]) {
      for (const [path, body, field] of cases) {
        const res = await fetch(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const answer = (await res.json()) as { code: string; issues?: { path: (string | number)[] }[] };
        expect(res.status, `${base}${path} ${field}`).toBe(400);
        expect(answer.code).toBe('EGGMESH_VALIDATION');
        expect(
          answer.issues?.map((issue) => issue.path.join('.')),
          `${path} ${field}`,
        ).toEqual([field]);
      }
    }
  });

  it('answers a browser preflight for every method and header the API uses, on the write-api and the read-api', async () => {
    const targets = [
      `${s.urls.write}/farm/api/00000000-0000-4000-8000-000000000001`,
      `${s.urls.read}/graphql`,
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
    const created = await fetch(`${s.urls.write}/farm/api`, {
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

    // Routes the read-api declares before its service plugin has loaded are counted too.
    await fetch(`${s.urls.read}/health`).then((r) => r.arrayBuffer());
    expect(await (await fetch(`${s.urls.read}/metrics`)).text()).toMatch(
      /^eggmesh_http_request_duration_seconds_count\{route="\/health",method="GET",status_class="2xx"\} [1-9]\d*$/m,
    );
  });
});

describe('slow clients (EGGMESH_HTTP_HEADERS_TIMEOUT_MS, EGGMESH_HTTP_REQUEST_TIMEOUT_MS)', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ EGGMESH_HTTP_HEADERS_TIMEOUT_MS: '300', EGGMESH_HTTP_REQUEST_TIMEOUT_MS: '600' });
  });
  afterAll(async () => s.close());

  it('answer 408 EGGMESH_REQUEST_TIMEOUT to a request head or body that stops arriving, and close', async () => {
    const slow = {
      head: 'POST /farm/api HTTP/1.1\r\nHost: x\r\nContent-Type: applica',
      body: 'POST /farm/api HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":',
    };
    for (const url of [s.urls.write, s.urls.read]) {
      for (const [what, text] of Object.entries(slow)) {
        // Sent, then nothing: the server must answer and close on its own (the socket waits 20 s).
        const answer = await raw(Number(new URL(url).port), text, 20_000);
        const [head = '', body = ''] = answer.split('\r\n\r\n');
        expect(head, `${what} ${url}`).toMatch(/^HTTP\/1.1 408 /);
        expect(head.toLowerCase(), url).toContain('connection: close');
        expect(JSON.parse(body), url).toMatchObject({ code: 'EGGMESH_REQUEST_TIMEOUT' });
      }
    }
  });
});

describe('CORS by default', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack();
  });
  afterAll(async () => s.close());

  it('lets no other origin in: no preflight answered, no allow-origin on any answer, on both services', async () => {
    for (const url of [`${s.urls.write}/farm/api`, `${s.urls.read}/farm/api`, `${s.urls.read}/graphql`]) {
      const preflight = await fetch(url, {
        method: 'OPTIONS',
        headers: { origin: 'http://evil.test', 'access-control-request-method': 'DELETE' },
      });
      await preflight.arrayBuffer();
      expect(preflight.status, url).toBeGreaterThanOrEqual(400);
      expect(preflight.headers.get('access-control-allow-origin'), url).toBeNull();
      expect(preflight.headers.get('access-control-allow-methods'), url).toBeNull();
    }
    const created = await fetch(`${s.urls.write}/farm/api`, {
      method: 'POST',
      headers: { origin: 'http://evil.test', 'content-type': 'application/json' },
      body: JSON.stringify(farm),
    });
    await created.arrayBuffer();
    expect(created.headers.get('access-control-allow-origin')).toBeNull();
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

/** An app built as the services build theirs (serviceApp() and servicePlugin), with one plain route. */
async function serviceLike(env: Record<string, string>): Promise<FastifyInstance> {
  const config = parseConfig({ EGGMESH_LOG_LEVEL: 'silent', ...env });
  const app = serviceApp(config);
  await app.register(servicePlugin, { config, service: 'test' });
  app.get('/x', async () => ({ ok: true }));
  app.get('/health', async () => ({ status: 'ok' }));
  await app.ready();
  return app;
}

describe('rate limit (EGGMESH_RATE_LIMIT_PER_MIN)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts per client address over a minute and answers 429 with retry-after in the error format', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2026, 0, 1, 12, 0, 10));
    const app = await serviceLike({ EGGMESH_RATE_LIMIT_PER_MIN: '2' });
    const hit = (ip = '198.51.100.1', url = '/x') => app.inject({ method: 'GET', url, remoteAddress: ip });
    expect((await hit()).statusCode).toBe(200);
    expect((await hit()).statusCode).toBe(200);
    const refused = await hit();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.json()).toEqual({
      code: 'EGGMESH_RATE_LIMITED',
      error: 'more than 2 requests in a minute from this client; retry after 60 s',
    });
    expect((await hit('198.51.100.2')).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await hit('198.51.100.1', '/health')).statusCode).toBe(200);
    vi.setSystemTime(Date.UTC(2026, 0, 1, 12, 0, 59));
    expect((await hit()).headers['retry-after']).toBe('11');
    vi.setSystemTime(Date.UTC(2026, 0, 1, 12, 1, 10));
    expect((await hit()).statusCode).toBe(200);
    await app.close();
  });

  it('installs nothing when 0 (the default)', async () => {
    const app = await serviceLike({});
    for (let i = 0; i < 50; i++) {
      const res = await app.inject({ method: 'GET', url: '/x' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['retry-after']).toBeUndefined();
    }
    await app.close();
  });

  it('believes x-forwarded-for from the trusted proxies only: a loopback client cannot choose its identity', async () => {
    const app = await serviceLike({ EGGMESH_RATE_LIMIT_PER_MIN: '3', EGGMESH_TRUSTED_PROXIES: '10.0.0.5' });
    const from = (remoteAddress: string, forwardedFor: string) =>
      app
        .inject({ method: 'GET', url: '/x', remoteAddress, headers: { 'x-forwarded-for': forwardedFor } })
        .then((r) => r.statusCode);
    // A client on this host that is not the configured proxy, naming a new client each time: counted
    // as itself.
    const spoofed: number[] = [];
    for (let i = 0; i < 5; i++) spoofed.push(await from('127.0.0.1', `203.0.113.${i}`));
    expect(spoofed).toEqual([200, 200, 200, 429, 429]);
    // The proxy's clients are counted each as the address the proxy appended (the last one), whatever
    // a client put before it.
    const proxied: number[] = [];
    for (let i = 0; i < 4; i++) proxied.push(await from('10.0.0.5', `198.51.100.${i}, 203.0.113.50`));
    expect(proxied).toEqual([200, 200, 200, 429]);
    expect(await from('10.0.0.5', '203.0.113.51')).toBe(200);
    await app.close();

    const nobody = await serviceLike({ EGGMESH_RATE_LIMIT_PER_MIN: '1', EGGMESH_TRUSTED_PROXIES: 'none' });
    const first = await nobody.inject({
      url: '/x',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': 'a' },
    });
    const second = await nobody.inject({
      url: '/x',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': 'b' },
    });
    expect([first.statusCode, second.statusCode]).toEqual([200, 429]);
    await nobody.close();
  });

  it('a flood of 100,000 new forwarded addresses in a window does not switch the limit off for the next one', async () => {
    const app = await serviceLike({ EGGMESH_RATE_LIMIT_PER_MIN: '2' });
    const forwarded = (client: string) =>
      app.inject({
        method: 'GET',
        url: '/x',
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': client },
      });
    for (let i = 0; i < 100_000; i++) {
      const res = await forwarded(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
      if (res.statusCode !== 200) throw new Error(`flood request ${i} answered ${res.statusCode}`);
    }
    const next: number[] = [];
    for (let i = 0; i < 3; i++) next.push((await forwarded('198.51.100.77')).statusCode);
    expect(next).toEqual([200, 200, 429]);
    await app.close();
  }, 600_000);

  it('limits the write-api and the read-api per forwarded client, over HTTP, never /health', async () => {
    const s = await startStack({ EGGMESH_RATE_LIMIT_PER_MIN: '3' });
    try {
      for (const [url, init] of [
        [`${s.urls.write}/farm/api`, {}],
        [
          `${s.urls.read}/graphql`,
          {
            method: 'POST',
            body: JSON.stringify({ query: '{ farms { id } }' }),
            headers: { 'content-type': 'application/json' },
          },
        ],
      ] as const) {
        const ask = (client: string) =>
          fetch(url, { ...init, headers: { ...init.headers, 'x-forwarded-for': client } }).then(
            async (r) => ({
              status: r.status,
              retryAfter: r.headers.get('retry-after'),
              body: (await r.json()) as { code?: string },
            }),
          );
        const answers = [];
        for (let i = 0; i < 4; i++) answers.push(await ask('203.0.113.1'));
        expect(
          answers.map((a) => a.status),
          url,
        ).toEqual([200, 200, 200, 429]);
        expect(answers[3]?.body.code).toBe('EGGMESH_RATE_LIMITED');
        expect(Number(answers[3]?.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(Number(answers[3]?.retryAfter)).toBeLessThanOrEqual(60);
        expect((await ask('203.0.113.2')).status, url).toBe(200);
        for (let i = 0; i < 5; i++) {
          const health = await fetch(`${new URL(url).origin}/health`, {
            headers: { 'x-forwarded-for': '203.0.113.1' },
          });
          await health.arrayBuffer();
          expect(health.status).toBe(200);
        }
      }
    } finally {
      await s.close();
    }
  });
});
