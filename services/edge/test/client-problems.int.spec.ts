import { request as httpRequest } from 'node:http';
import { buildApp } from '@eggmesh/edge';
import { loadConfig } from '@eggmesh/service-kit';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnFreePort, raw } from './raw-client.js';

// A listening edge in front of real upstream servers, driven by raw HTTP clients: what curl and
// browsers send, including what the edge must not turn into a 5xx.
const LIMIT = 4096;

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

describe('edge: client-side problems', () => {
  let upstream: FastifyInstance;
  let edge: FastifyInstance;
  let port = 0;
  const logs: Record<string, unknown>[] = [];

  beforeAll(async () => {
    // The upstream takes bigger bodies than the edge, so a 413 below can only come from the edge.
    upstream = Fastify({ bodyLimit: LIMIT * 100, forceCloseConnections: true });
    upstream.all('/*', async (request) => ({
      url: request.url,
      bytes: JSON.stringify(request.body ?? null).length,
      headers: request.headers,
    }));
    upstream.get('/hang/api', () => new Promise(() => undefined));
    const upstreamUrl = await upstream.listen({ port: 0, host: '127.0.0.1' });
    edge = await buildApp({
      config: loadConfig({
        EGGMESH_WRITE_API_URL: upstreamUrl,
        EGGMESH_READ_API_URL: 'http://127.0.0.1:9',
        EGGMESH_BODY_LIMIT_BYTES: String(LIMIT),
        EGGMESH_HTTP_HEADERS_TIMEOUT_MS: '1000',
        EGGMESH_HTTP_REQUEST_TIMEOUT_MS: '1000',
        EGGMESH_LOG_REQUESTS: 'true',
      }),
      logger: {
        level: 'info',
        stream: { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) },
      },
    });
    port = await listenOnFreePort(edge);
  });
  afterAll(async () => {
    await edge.close();
    await upstream.close();
  });

  it('forwards a body sent with Expect: 100-continue', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(1000) });
    const answer = await expectContinue(`http://127.0.0.1:${port}/farm/api`, body);
    expect(answer.status).toBe(200);
    expect(answer.continued).toBe(true);
    expect(JSON.parse(answer.body)).toMatchObject({ url: '/farm/api', bytes: body.length });
    expect(JSON.parse(answer.body).headers.expect).toBeUndefined();
  });

  it('forwards requests carrying hop-by-hop headers without them', async () => {
    for (const header of [
      'Upgrade: h2c',
      'Keep-Alive: timeout=5',
      'TE: trailers',
      'Proxy-Connection: keep-alive',
    ]) {
      const answer = await raw(
        port,
        `GET /farm/api HTTP/1.1\r\nHost: x\r\n${header}\r\nConnection: close\r\n\r\n`,
      );
      expect(statusOf(answer), header).toBe(200);
      // The client's connection is the edge's, not the service's: it asked to close, it is closed.
      expect(answer, header).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer, header).not.toMatch(/\r\nkeep-alive:/i);
      // One Date (the edge's), however the service's answer carried its own.
      expect(answer.match(/\r\ndate:/gi), header).toHaveLength(1);
      const forwarded = bodyOf(answer).headers as Record<string, unknown>;
      expect(forwarded[header.split(':')[0]!.toLowerCase()], header).toBeUndefined();
    }
  });

  it('passes repeated headers on as given, and headers a Connection header names are dropped', async () => {
    const answer = await raw(
      port,
      'GET /farm/api HTTP/1.1\r\nHost: x\r\nX-Trace: a\r\nX-Trace: b\r\nX-Secret: s\r\nX-Forwarded-For: 10.0.0.1\r\nConnection: close, X-Secret\r\n\r\n',
    );
    expect(statusOf(answer)).toBe(200);
    const forwarded = bodyOf(answer).headers as Record<string, unknown>;
    expect(forwarded['x-trace']).toBe('a, b');
    expect(forwarded['x-secret']).toBeUndefined();
    expect(forwarded['x-forwarded-for']).toBe('10.0.0.1, 127.0.0.1');
  });

  it('names the service, not its address, when it does not answer', async () => {
    const answer = await raw(port, 'GET /graphql HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(statusOf(answer)).toBe(502);
    const body = bodyOf(answer);
    expect(body).toEqual({ error: 'the read-api did not answer', code: 'EGGMESH_UPSTREAM_UNAVAILABLE' });
    expect(JSON.stringify(logs)).toContain('127.0.0.1:9');
  });

  it('answers 504 when the service takes longer than the request timeout', async () => {
    const answer = await raw(port, 'GET /hang/api HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(statusOf(answer)).toBe(504);
    expect(bodyOf(answer)).toEqual({
      error: 'the write-api did not answer in time',
      code: 'EGGMESH_UPSTREAM_TIMEOUT',
    });
  });

  it('answers 408, not 504, to a body that has not arrived within the request timeout', async () => {
    const answer = await raw(
      port,
      'POST /farm/api?slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
      4000,
    );
    expect(statusOf(answer)).toBe(408);
  });

  it('answers 413 itself for a body over the limit, with or without a length', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(LIMIT * 10) });
    const sized = await raw(
      port,
      `POST /farm/api HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`,
    );
    expect(statusOf(sized)).toBe(413);
    expect(bodyOf(sized).code).toBe('EGGMESH_BODY_TOO_LARGE');
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const chunked = await raw(
      port,
      `POST /farm/api HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(big.slice(0, 3000))}${chunk(big.slice(3000))}0\r\n\r\n`,
    );
    expect(statusOf(chunked)).toBe(413);
    expect(bodyOf(chunked).code).toBe('EGGMESH_BODY_TOO_LARGE');
  });

  it('answers 400 to malformed requests', async () => {
    expect(statusOf(await raw(port, 'GET /farm/api HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'))).toBe(400);
    const badUrl = await raw(port, 'GET /farm/api/%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(statusOf(badUrl)).toBe(400);
    expect(bodyOf(badUrl).code).toBe('EGGMESH_BAD_REQUEST');
  });

  it('answers an upload the client abandons as a client problem, never a 5xx', async () => {
    logs.length = 0;
    await raw(
      port,
      'POST /farm/api?abandoned HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":',
      200,
    );
    // Forwarded requests bypass Fastify's hooks: what the edge answered is in its request log.
    const answer = () =>
      logs.find(
        (l) =>
          l.msg === 'request completed' &&
          (l.req as { url?: string } | undefined)?.url === '/farm/api?abandoned',
      );
    const deadline = Date.now() + 10_000;
    while (!answer() && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((answer()?.res as { statusCode?: number } | undefined)?.statusCode).toBe(400);
    expect(logs.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });
});
