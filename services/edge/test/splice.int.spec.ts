import { connect, createServer, type Server, type Socket } from 'node:net';
import { buildApp } from '@eggmesh/edge';
import { loadConfig } from '@eggmesh/service-kit';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, listenOnFreePort } from './raw-client.js';

// The edge's byte path (splice.ts) against real upstream servers, driven by raw sockets: pipelined
// requests that alternate between the byte path and node:http, heads and bodies in pieces, the answers'
// framings (length, chunked, none), and what the client sees of the connection.

/** The answers in a byte stream, in order: status and body (by Content-Length or chunked). */
function answers(text: string): { status: number; head: string; body: string }[] {
  const out: { status: number; head: string; body: string }[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end === -1) break;
    const head = text.slice(at, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    let body = '';
    at = end + 4;
    if (length) {
      body = text.slice(at, at + Number(length[1]));
      at += Number(length[1]);
    } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      for (;;) {
        const nl = text.indexOf('\r\n', at);
        const size = Number.parseInt(text.slice(at, nl), 16);
        at = nl + 2;
        if (size === 0) {
          at = text.indexOf('\r\n', at) + 2;
          break;
        }
        body += text.slice(at, at + size);
        at += size + 2;
      }
    } else {
      body = text.slice(at);
      at = text.length;
    }
    out.push({ status, head, body });
  }
  return out;
}

const post = (path: string, body: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
/** The size of the `?large` in-process answer. */
const LARGE = 8 * 1024 * 1024;

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;

describe('edge: the byte path', () => {
  let upstream: FastifyInstance;
  let odd: Server;
  let oddPort = 0;
  let edge: FastifyInstance;
  let port = 0;
  /** Connections the write upstream accepted, and those still open. */
  let upstreamConnections = 0;
  const upstreamSockets = new Set<Socket>();
  /** Calls of the edge's `wrote` (a forwarded request's answer from the write-api passed on). */
  let wrote = 0;

  beforeAll(async () => {
    upstream = Fastify({ forceCloseConnections: true });
    upstream.server.on('connection', (socket: Socket) => {
      upstreamConnections += 1;
      upstreamSockets.add(socket);
      socket.once('close', () => upstreamSockets.delete(socket));
    });
    upstream.all('/*', async (request) => ({
      method: request.method,
      url: request.url,
      body: request.body ?? null,
      forwardedFor: request.headers['x-forwarded-for'] ?? null,
      connection: request.headers.connection ?? null,
    }));
    // Answers without a length: streamed (chunked) by Node.
    upstream.get('/stream/api', (_request, reply) => {
      reply.raw.writeHead(200, { 'content-type': 'text/plain' });
      reply.raw.write('one,');
      setTimeout(() => reply.raw.end('two'), 20);
    });
    upstream.get('/empty/api', async (_request, reply) => reply.code(204).send());
    upstream.get('/closing/api', async (_request, reply) =>
      reply.header('connection', 'close').send({ ok: true }),
    );
    const upstreamUrl = await upstream.listen({ port: 0, host: '127.0.0.1' });
    // A read "service" that answers HTTP/1.0-style: no length, the end of the body is the connection's end.
    odd = createServer((socket: Socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil-close'));
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    const address = odd.address();
    oddPort = typeof address === 'object' && address ? address.port : 0;
    edge = await buildApp({
      config: loadConfig({
        EGGMESH_WRITE_API_URL: upstreamUrl,
        EGGMESH_READ_API_URL: `http://127.0.0.1:${oddPort}`,
        EGGMESH_BODY_LIMIT_BYTES: '4096',
      }),
      wrote: () => {
        wrote += 1;
      },
      // The GraphQL paths answered in process, through node:http (as on the embedded tier).
      read: (request, response) => {
        let body = '';
        request.setEncoding('utf8');
        request.on('data', (c) => {
          body += c;
        });
        request.on('end', () => {
          if (request.url?.endsWith('?large')) {
            // 8 MiB in 64 KiB pieces, each written once the socket has taken the last (backpressure).
            response.writeHead(200, { 'content-type': 'text/plain', 'content-length': LARGE });
            const piece = Buffer.alloc(64 * 1024, 'x');
            let sent = 0;
            const more = () => {
              while (sent < LARGE) {
                sent += piece.length;
                if (!response.write(piece)) {
                  response.once('drain', more);
                  return;
                }
              }
              response.end();
            };
            more();
            return;
          }
          const text = JSON.stringify({ in_process: request.url, body });
          response.writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
            // `?close`: the handler ends the connection after its answer.
            ...(request.url?.endsWith('?close') ? { connection: 'close' } : {}),
          });
          // `?buffer`: the body as bytes, which node:http cannot join to its head as one string.
          response.end(request.url?.endsWith('?buffer') ? Buffer.from(text) : text);
        });
      },
    });
    port = await listenOnFreePort(edge);
  });
  afterAll(async () => {
    await edge.close();
    await upstream.close();
    odd.close();
  });

  it('answers pipelined requests in order, alternating between the byte path and node:http', async () => {
    const text = await exchange(port, [
      post('/farm/api', '{"a":1}') +
        post('/farm/graph', '{"query":"{ x }"}') +
        get('/farm/api/1?q=2') +
        post('/graphql', '{"query":"{ y }"}') +
        post('/farm/api', '{"a":2}', 'Connection: close\r\n'),
    ]);
    const got = answers(text);
    expect(got.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(JSON.parse(got[0]!.body)).toMatchObject({ method: 'POST', url: '/farm/api', body: { a: 1 } });
    expect(JSON.parse(got[1]!.body)).toEqual({ in_process: '/farm/graph', body: '{"query":"{ x }"}' });
    expect(JSON.parse(got[2]!.body)).toMatchObject({ method: 'GET', url: '/farm/api/1?q=2' });
    expect(JSON.parse(got[3]!.body)).toEqual({ in_process: '/graphql', body: '{"query":"{ y }"}' });
    expect(JSON.parse(got[4]!.body)).toMatchObject({ method: 'POST', body: { a: 2 } });
    // The client asked to close with the last one: it says so, and the connection closed (exchange ended).
    expect(got[4]!.head).toMatch(/\r\nconnection: close/i);
    expect(got[0]!.head).toMatch(/\r\nconnection: keep-alive/i);
    // The edge's keep-alive timeout (10 s), not the service's (Fastify's default, 72 s).
    expect(got[0]!.head).toMatch(/\r\nkeep-alive: timeout=10($|\r\n)/i);
    expect(got[0]!.head).not.toMatch(/timeout=72/);
  });

  it('tells once per answer the write-api gave, after passing it on, and not for what it answers itself', async () => {
    const before = wrote;
    const text = await exchange(port, [
      post('/farm/api', '{"a":1}') +
        post('/farm/graph', '{"query":"{ x }"}') +
        post('/graphql', '{"query":"{ y }"}') +
        post('/farm/api', '{"a":2}', 'Connection: close\r\n'),
    ]);
    expect(answers(text).map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(wrote - before).toBe(2);
  });

  it('passes a body that arrives in pieces, and a head in pieces still gets its answer', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(2000) });
    const request = post('/farm/api', body, 'Connection: close\r\n');
    const split = request.indexOf('\r\n\r\n') + 4;
    const bodyInPieces = answers(
      await exchange(port, [
        request.slice(0, split + 10),
        request.slice(split + 10, split + 900),
        request.slice(split + 900),
      ]),
    );
    expect(bodyInPieces).toHaveLength(1);
    expect(JSON.parse(bodyInPieces[0]!.body).body).toEqual({ name: 'x'.repeat(2000) });
    const headInPieces = answers(await exchange(port, [request.slice(0, 20), request.slice(20)]));
    expect(headInPieces).toHaveLength(1);
    expect(JSON.parse(headInPieces[0]!.body).body).toEqual({ name: 'x'.repeat(2000) });
  });

  it("appends the client to X-Forwarded-For and drops the client's Connection header", async () => {
    const got = answers(
      await exchange(port, [
        get('/farm/api', 'X-Forwarded-For: 10.0.0.1\r\nX-Forwarded-For: 10.0.0.2\r\nConnection: close\r\n'),
      ]),
    );
    expect(JSON.parse(got[0]!.body)).toMatchObject({
      forwardedFor: '10.0.0.1, 10.0.0.2, 127.0.0.1',
      connection: null,
    });
  });

  it('passes on answers framed by chunks, without a body (204, HEAD), in order', async () => {
    const text = await exchange(port, [
      get('/stream/api') +
        get('/empty/api') +
        'HEAD /farm/api HTTP/1.1\r\nHost: x\r\n\r\n' +
        get('/farm/api', 'Connection: close\r\n'),
    ]);
    expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual([
      'HTTP/1.1 200',
      'HTTP/1.1 204',
      'HTTP/1.1 200',
      'HTTP/1.1 200',
    ]);
    expect(answers(text)[0]).toMatchObject({ status: 200, body: 'one,two' });
    // The HEAD answer has a length but no body: the next answer follows its head directly.
    const last = text.slice(text.lastIndexOf('HTTP/1.1 200'));
    expect(JSON.parse(answers(last)[0]!.body)).toMatchObject({ method: 'GET', url: '/farm/api' });
  });

  it('closes the client connection after an answer the service closed its own after', async () => {
    const text = await exchange(port, [get('/closing/api') + get('/farm/api')]);
    const got = answers(text);
    // The second request is never answered: the connection closed after the first answer.
    expect(got).toHaveLength(1);
    expect(got[0]!.head).toMatch(/\r\nconnection: close/i);
  });

  it('reuses its connections to a service across clients', async () => {
    for (let i = 0; i < 3; i++) await exchange(port, [get('/warm/api', 'Connection: close\r\n')]);
    const before = upstreamConnections;
    for (let i = 0; i < 10; i++) {
      const got = answers(await exchange(port, [get(`/farm/api/${i}`, 'Connection: close\r\n')]));
      expect(got[0]!.status).toBe(200);
    }
    expect(upstreamConnections - before).toBeLessThanOrEqual(1);
  });

  it('drops a pooled connection that sent bytes or closed while idle, and answers on a new one', async () => {
    const first = answers(await exchange(port, [get('/farm/api/a', 'Connection: close\r\n')]));
    expect(first[0]!.status).toBe(200);
    // Every connection the edge holds to the service is idle now: one says something unasked…
    const idle = [...upstreamSockets];
    expect(idle.length).toBeGreaterThan(0);
    for (const socket of idle) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nstale');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = upstreamConnections;
    const second = answers(await exchange(port, [get('/farm/api/b', 'Connection: close\r\n')]));
    // …so the next request goes on a new connection and gets its own answer, not those bytes.
    expect(second[0]!.status).toBe(200);
    expect(JSON.parse(second[0]!.body).url).toBe('/farm/api/b');
    expect(upstreamConnections - before).toBe(1);
    // The service closes its side of every idle connection: the next request opens another.
    for (const socket of upstreamSockets) socket.end();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const third = answers(await exchange(port, [get('/farm/api/c', 'Connection: close\r\n')]));
    expect(third[0]!.status).toBe(200);
    expect(JSON.parse(third[0]!.body).url).toBe('/farm/api/c');
    expect(upstreamConnections - before).toBe(2);
  });

  it('answers a read service that closes to end its body, then closes the client connection', async () => {
    const text = await exchange(port, [
      `POST /farm/graph HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    ]);
    // /farm/graph is answered in process here; a proxied read path goes to the odd service:
    expect(answers(text)[0]!.status).toBe(200);
    const proxied = await buildApp({
      config: loadConfig({
        EGGMESH_WRITE_API_URL: `http://127.0.0.1:${oddPort}`,
        EGGMESH_READ_API_URL: `http://127.0.0.1:${oddPort}`,
      }),
    });
    await proxied.listen({ port: 0, host: '127.0.0.1' });
    try {
      const address = proxied.server.address();
      const proxiedPort = typeof address === 'object' && address ? address.port : 0;
      const got = await exchange(proxiedPort, [get('/graphql') + get('/graphql')]);
      expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(got).toMatch(/\r\nconnection: close\r\n/i);
      expect(got.endsWith('\r\n\r\nuntil-close')).toBe(true);
    } finally {
      await proxied.close();
    }
  });

  it('writes each answer it gives in process in one write, served directly or through the stand-in', async () => {
    // What the edge handed the kernel for each client connection it accepted, one entry per write.
    const writes: Buffer[] = [];
    const count = (socket: Socket) => {
      const one = socket._write;
      const many = socket._writev;
      socket._write = function (this: Socket, chunk, encoding, done) {
        writes.push(Buffer.from(chunk as Buffer));
        one.call(this, chunk, encoding, done);
      } as Socket['_write'];
      socket._writev = function (this: Socket, chunks, done) {
        writes.push(Buffer.concat(chunks.map((c) => Buffer.from(c.chunk as Buffer))));
        many?.call(this, chunks, done);
      } as Socket['_writev'];
    };
    edge.server.on('connection', count);
    try {
      // A request on the byte path; one the splice read whole, answered on the socket itself; one with
      // a header that takes it to node:http's own reading (the stand-in), its body as bytes.
      const text = await exchange(port, [
        post('/farm/api', '{"a":4}') +
          post('/farm/graph', '{"query":"{ x }"}') +
          post('/graphql?buffer', '{"query":"{ y }"}', 'TE: trailers\r\nConnection: close\r\n'),
      ]);
      expect(answers(text).map((a) => a.status)).toEqual([200, 200, 200]);
      expect(JSON.parse(answers(text)[2]!.body)).toEqual({
        in_process: '/graphql?buffer',
        body: '{"query":"{ y }"}',
      });
      // node:http writes a head, a body and an empty end for each: one write each, not three (or two).
      expect(writes.slice(-2).map((w) => w.toString('latin1').slice(0, 12))).toEqual([
        'HTTP/1.1 200',
        'HTTP/1.1 200',
      ]);
      expect(Buffer.concat(writes).toString('latin1')).toBe(text);
    } finally {
      edge.server.off('connection', count);
    }
  });

  it('answers a request read whole on the client socket as node:http would: keep-alive, and close when asked', async () => {
    const got = answers(
      await exchange(port, [
        post('/farm/graph', '{"query":"{ a }"}') +
          get('/farm/graph?query=%7Bb%7D', 'Connection: close\r\n') +
          post('/farm/graph', '{"query":"{ never }"}'),
      ]),
    );
    // The third request came after the client's close: it is not answered (the connection closed).
    expect(got.map((a) => JSON.parse(a.body).in_process)).toEqual([
      '/farm/graph',
      '/farm/graph?query=%7Bb%7D',
    ]);
    expect(got[0]!.head).toMatch(/\r\nconnection: keep-alive\r\nkeep-alive: timeout=10($|\r\n)/i);
    expect(got[0]!.head).toMatch(/\r\ndate: /i);
    expect(got[1]!.head).toMatch(/\r\nconnection: close($|\r\n)/i);
    // The handler closes: the same.
    const closed = answers(
      await exchange(port, [
        post('/graphql?close', '{"query":"{ c }"}') + post('/graphql', '{"query":"{ d }"}'),
      ]),
    );
    expect(closed.map((a) => JSON.parse(a.body).in_process)).toEqual(['/graphql?close']);
  });

  it('writes a large in-process answer with backpressure to the end (the answer is told when the socket drains)', async () => {
    const text = await exchange(
      port,
      [post('/graphql?large', '{"query":"{ big }"}', 'Connection: close\r\n')],
      20_000,
    );
    const got = answers(text);
    expect(got.map((a) => a.status)).toEqual([200]);
    expect(got[0]!.body.length).toBe(LARGE);
  });

  it('closes idle connections it holds when the edge shuts down', async () => {
    const other = await buildApp({
      config: loadConfig({
        EGGMESH_WRITE_API_URL: `http://127.0.0.1:${oddPort}`,
        EGGMESH_READ_API_URL: `http://127.0.0.1:${oddPort}`,
      }),
    });
    await other.listen({ port: 0, host: '127.0.0.1' });
    const address = other.server.address();
    const otherPort = typeof address === 'object' && address ? address.port : 0;
    const socket = connect(otherPort, '127.0.0.1');
    await new Promise((resolve) => socket.on('connect', resolve));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.on('error', () => undefined);
    const started = Date.now();
    await other.close();
    await closed;
    // Well before the 10 s keep-alive timeout.
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
