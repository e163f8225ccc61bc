import { request as httpRequest, METHODS } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { sideOf } from '@eggmesh/rest';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnFreePort, raw } from '../../../infra/test/raw-client.js';
import { type Fixture, fixture } from './helpers.js';

// The public port forwards the write routes of the route table to the write-api. A small real HTTP
// server stands in for the write-api; raw clients send what curl and browsers send, including what
// the front door must not turn into a 5xx.
const LIMIT = 4096;
const KEEP_ALIVE_MS = 700;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends a request with `Expect: 100-continue` the way curl does: the body only after `100 Continue`. */
function expectContinue(url: string, body: string): Promise<Answer & { continued: boolean }> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        expect: '100-continue',
      },
    });
    req.on('continue', () => {
      continued = true;
      req.end(body);
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, continued }),
      );
    });
    req.on('error', reject);
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
const bodyOf = (answer: string) =>
  JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

/** A stand-in write-api: echoes what reached it; a few paths answer slowly, never, or with a big body. */
async function writeApi(): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify({ bodyLimit: LIMIT * 100, forceCloseConnections: true });
  for (const method of METHODS)
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method))
      app.addHttpMethod(method, { hasBody: true });
  // The body as it arrived, not parsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.all('/*', async (request, reply) => {
    reply.header('x-log-position', '7').header('location', '/farm/api/1').header('retry-after', '3');
    reply.header('www-authenticate', 'Bearer realm="eggmesh"');
    const body = request.body;
    return {
      served_by: 'write',
      method: request.method,
      url: request.url,
      body: Buffer.isBuffer(body) ? body.toString('utf8') : body,
      headers: request.headers,
    };
  });
  app.post('/slow/api', async (request) => {
    await new Promise((r) => setTimeout(r, Number((request.query as { ms?: string }).ms ?? 0)));
    return { ok: true };
  });
  app.post('/hang/api', () => new Promise(() => undefined));
  app.get('/docs/big', async () => ({ big: 'x'.repeat(3 * 1024 * 1024) }));
  // An answer far larger than every buffer on the way: a client that stops reading pauses this
  // connection mid-answer. Each connection that carried one is noted, with whether it closed.
  const streams: { closed: boolean }[] = [];
  app.get('/docs/huge', (request, reply) => {
    const note = { closed: false };
    streams.push(note);
    request.raw.socket.once('close', () => {
      note.closed = true;
    });
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let left = 1024; // 64 MiB
    const body = new Readable({
      read() {
        this.push(left-- > 0 ? chunk : null);
      },
    });
    reply.type('application/octet-stream').send(body);
  });
  let posts = 0;
  app.post('/counted/api', async () => ({ post: ++posts }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url, streams, posts: () => posts };
}

describe('the public port forwards the write routes to the write-api', () => {
  let upstream: Awaited<ReturnType<typeof writeApi>>;
  let f: Fixture;
  let port = 0;
  let base = '';
  const logs: string[] = [];

  beforeAll(async () => {
    upstream = await writeApi();
    f = await fixture({
      env: {
        EGGMESH_WRITE_API_URL: upstream.url,
        EGGMESH_BODY_LIMIT_BYTES: String(LIMIT),
        EGGMESH_HTTP_HEADERS_TIMEOUT_MS: '1000',
        EGGMESH_HTTP_REQUEST_TIMEOUT_MS: '1000',
        EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
        EGGMESH_LOG_LEVEL: 'warn',
      },
      log: (line) => logs.push(line),
    });
    port = await listenOnFreePort(f.app);
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await f?.close();
    await upstream?.app.close();
  });

  it('routes every request as the route table says: writes, /docs and /openapi.json to the write-api, the rest here', async () => {
    const id = '0190b1a0-0000-7000-8000-000000000000';
    const requests = [
      ['POST', '/farm/api'],
      ['PUT', `/farm/api/${id}`],
      ['DELETE', `/farm/api/${id}`],
      ['PATCH', `/farm/api/${id}`],
      ['POST', '/farm/api/bulk/read'],
      ['POST', '/lay_report/api/bulk'],
      ['PROPFIND', '/hen/api'],
      ['POST', '/nosuch/api'],
      ['GET', '/openapi.json'],
      ['GET', '/docs'],
      ['GET', '/docs/static/index.html'],
      ['POST', '/docs/x'],
      ['GET', '/farm/api'],
      ['HEAD', '/farm/api'],
      ['GET', `/farm/api/${id}`],
      ['GET', '/farm/api/bulk/read'],
      ['GET', '/nosuch/api'],
      ['POST', '/graphql'],
      ['POST', '/farm/graph'],
      ['GET', '/graphiql'],
      ['GET', '/'],
      ['GET', '/health'],
      ['GET', '/metrics'],
      ['GET', '/no/such/path'],
      ['POST', '/farm/apix'],
    ] as const;
    const sides = new Set<string>();
    for (const [method, path] of requests) {
      const answer = await raw(
        port,
        `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      );
      const side = sideOf(method, path);
      sides.add(side);
      const forwarded = answer.includes('"served_by":"write"');
      expect(forwarded, `${method} ${path}: ${answer.slice(0, 200)}`).toBe(side === 'write');
      if (!forwarded) expect(statusOf(answer), `${method} ${path}`).toBeLessThan(500);
    }
    expect(sides).toEqual(new Set(['write', 'read']));
  });

  it('passes method, path, query and body on unchanged, and the write-api’s answer headers back', async () => {
    const response = await fetch(`${base}/farm/api/bulk?x=1&y=%C3%A9`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[{"name":"Ferme « é »"}]',
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      method: 'POST',
      url: '/farm/api/bulk?x=1&y=%C3%A9',
      body: '[{"name":"Ferme « é »"}]',
    });
    for (const [name, value] of [
      ['x-log-position', '7'],
      ['location', '/farm/api/1'],
      ['retry-after', '3'],
      ['www-authenticate', 'Bearer realm="eggmesh"'],
    ])
      expect(response.headers.get(name!), name).toBe(value);
  });

  it('keeps connections alive and streams a large answer whole', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}/farm/api/${i}?q=${i}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ i }),
      });
      expect(((await res.json()) as { url: string }).url).toBe(`/farm/api/${i}?q=${i}`);
    }
    const big = await fetch(`${base}/docs/big`);
    expect(big.status).toBe(200);
    expect(((await big.json()) as { big: string }).big.length).toBe(3 * 1024 * 1024);
  });

  it('forwards a body sent with Expect: 100-continue', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(1000) });
    const answer = await expectContinue(`${base}/farm/api`, body);
    expect(answer.status).toBe(200);
    expect(answer.continued).toBe(true);
    const echoed = JSON.parse(answer.body) as { body: string; headers: Record<string, string> };
    expect(echoed.body).toBe(body);
    expect(echoed.headers.expect).toBeUndefined();
  });

  it('drops hop-by-hop headers and those a Connection header names, appends the client to x-forwarded-for', async () => {
    for (const header of [
      'Upgrade: h2c',
      'Keep-Alive: timeout=5',
      'TE: trailers',
      'Proxy-Connection: keep-alive',
    ]) {
      const answer = await raw(
        port,
        `POST /farm/api HTTP/1.1\r\nHost: x\r\n${header}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      );
      expect(statusOf(answer), header).toBe(200);
      // The client's connection is this server's, not the write-api's: it asked to close, it is closed.
      expect(answer, header).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer, header).not.toMatch(/\r\nkeep-alive:/i);
      expect(answer.match(/\r\ndate:/gi), header).toHaveLength(1);
      const forwarded = bodyOf(answer).headers as Record<string, unknown>;
      expect(forwarded[header.split(':')[0]!.toLowerCase()], header).toBeUndefined();
    }
    const answer = await raw(
      port,
      'POST /farm/api HTTP/1.1\r\nHost: x\r\nX-Trace: a\r\nX-Trace: b\r\nX-Secret: s\r\nX-Forwarded-For: 10.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close, X-Secret\r\n\r\n{}',
    );
    expect(statusOf(answer)).toBe(200);
    const forwarded = bodyOf(answer).headers as Record<string, unknown>;
    expect(forwarded['x-trace']).toBe('a, b');
    expect(forwarded['x-secret']).toBeUndefined();
    expect(forwarded['x-forwarded-for']).toBe('10.0.0.1, 127.0.0.1');
  });

  it('answers 413 itself for a body over the limit, with or without a length', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(LIMIT * 10) });
    const sized = await raw(
      port,
      `POST /farm/api HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`,
    );
    expect(statusOf(sized)).toBe(413);
    expect(bodyOf(sized)).toEqual({
      error: `the request body is larger than ${LIMIT} bytes`,
      code: 'EGGMESH_BODY_TOO_LARGE',
    });
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const chunked = await raw(
      port,
      `POST /farm/api HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(big.slice(0, 3000))}${chunk(big.slice(3000))}0\r\n\r\n`,
    );
    expect(statusOf(chunked)).toBe(413);
    expect(bodyOf(chunked).code).toBe('EGGMESH_BODY_TOO_LARGE');
  });

  it('answers an answer slower than the keep-alive time, and 504 past the request timeout', async () => {
    const slow = await fetch(`${base}/slow/api?ms=${KEEP_ALIVE_MS + 100}`, { method: 'POST' });
    expect(slow.status).toBe(200);
    expect(await slow.json()).toEqual({ ok: true });
    const hung = await fetch(`${base}/hang/api`, { method: 'POST' });
    expect(hung.status).toBe(504);
    expect(await hung.json()).toEqual({
      error: 'the write-api did not answer in time',
      code: 'EGGMESH_UPSTREAM_TIMEOUT',
    });
  });

  it('names the write-api, never its address, when it does not answer (the log has the address)', async () => {
    const dead = await fixture({
      env: { EGGMESH_WRITE_API_URL: 'http://127.0.0.1:9', EGGMESH_LOG_LEVEL: 'warn' },
      log: (line) => logs.push(line),
    });
    try {
      const answer = await dead.app.inject({
        method: 'POST',
        url: '/farm/api',
        payload: { name: 'x' },
      });
      expect(answer.statusCode).toBe(502);
      expect(answer.json()).toEqual({
        error: 'the write-api did not answer',
        code: 'EGGMESH_UPSTREAM_UNAVAILABLE',
      });
      expect(answer.body).not.toContain('127.0.0.1');
      expect(logs.join('\n')).toContain('127.0.0.1:9');
    } finally {
      await dead.close();
    }
  });

  it('closes, never pools, the write-api connection of an answer its client stopped reading and left: the next write is answered at once, once', async () => {
    const paused = connect({ port, host: '127.0.0.1' });
    paused.on('error', () => undefined);
    await new Promise((resolve) => paused.once('connect', resolve));
    paused.pause();
    paused.write('GET /docs/huge HTTP/1.1\r\nHost: x\r\n\r\n');
    // The answer fills every buffer on the way and the write-api's connection stalls mid-answer.
    await new Promise((r) => setTimeout(r, 1500));
    expect(upstream.streams.length).toBe(1);
    expect(upstream.streams[0]!.closed).toBe(false);
    paused.destroy();
    // The client went away: its half-read upstream connection is closed, not given to the next request.
    const deadline = Date.now() + 5000;
    while (!upstream.streams[0]!.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(upstream.streams[0]!.closed).toBe(true);
    const before = upstream.posts();
    for (let i = 1; i <= 3; i++) {
      // A request given the stalled connection would never be answered: the abort fails it.
      const answer = await fetch(`${base}/counted/api`, {
        method: 'POST',
        signal: AbortSignal.timeout(5000),
      });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ post: before + i });
    }
    expect(upstream.posts()).toBe(before + 3);
  });

  it('answers GET / with a landing page linking to the dashboard, GraphiQL, the docs, the guide, /health and /metrics', async () => {
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    for (const link of [
      '/dashboard/',
      '/homestead/',
      '/corporate/',
      '/graphiql',
      '/docs',
      '/api.md',
      '/health',
      '/metrics',
    ])
      expect(html).toContain(`href="${link}"`);
    // The dashboard is served here, as a page (its CSP lets it load its own scripts and open its socket).
    const dashboard = await fetch(`${base}/dashboard/`);
    expect(dashboard.status).toBe(200);
    expect(dashboard.headers.get('content-type')).toMatch(/^text\/html/);
    expect(dashboard.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(await dashboard.text()).toContain('<script type="module" crossorigin src="/dashboard/assets/');
    const corporate = await fetch(`${base}/corporate/`);
    expect(corporate.status).toBe(200);
    expect(await corporate.text()).toContain('<script type="module" crossorigin src="/corporate/assets/');
    const manifest = await fetch(`${base}/homestead/manifest.webmanifest`);
    expect(manifest.status).toBe(200);
    expect(((await manifest.json()) as { scope: string }).scope).toBe('/homestead/');
    const bare = await fetch(`${base}/dashboard`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/dashboard/');
    const guide = await fetch(`${base}/api.md`);
    expect(guide.status).toBe(200);
    expect(await guide.text()).toContain('EGGMESH_ROUTE_NOT_FOUND');
  });
});
