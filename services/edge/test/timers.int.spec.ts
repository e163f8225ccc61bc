import { connect, type Socket } from 'node:net';
import { buildApp } from '@eggmesh/edge';
import { loadConfig } from '@eggmesh/service-kit';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnFreePort } from './raw-client.js';

// The edge's timers on the byte path: the client connection's keep-alive timer and the pooled
// connections' idle timer run all the time and act only on an idle connection; each forward has a
// deadline counted from its own start. A slow answer (longer than the keep-alive and pool idle times,
// shorter than the request timeout) must come through, and idle connections must still close.
const KEEP_ALIVE_MS = 700;
const REQUEST_TIMEOUT_MS = 1000;

/** One keep-alive client connection: sends a request, reads one answer (framed by Content-Length). */
class Client {
  readonly socket: Socket;
  readonly closed: Promise<void>;
  #buffer = '';
  #waiting: ((answer: { status: number; body: string }) => void) | undefined;

  constructor(port: number) {
    this.socket = connect({ port, host: '127.0.0.1' });
    this.socket.setEncoding('latin1');
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end === -1 || !this.#waiting) return;
      const length = Number(/content-length: (\d+)/i.exec(this.#buffer.slice(0, end))?.[1] ?? 0);
      if (this.#buffer.length < end + 4 + length) return;
      const answer = {
        status: Number(this.#buffer.slice(9, 12)),
        body: this.#buffer.slice(end + 4, end + 4 + length),
      };
      this.#buffer = this.#buffer.slice(end + 4 + length);
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting(answer);
    });
  }

  /** The answer, or a rejection if the edge closes the connection first. */
  get(path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      this.#waiting = resolve;
      void this.closed.then(() =>
        reject(new Error(`the edge closed the connection before answering ${path}`)),
      );
      this.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves true if `done` settles within `ms`, false otherwise. */
const within = (done: Promise<unknown>, ms: number) =>
  Promise.race([done.then(() => true), sleep(ms).then(() => false)]);

/**
 * A service answering `/slow/api?ms=N` after N ms, behind an edge with `keepAliveMs`; `serviceSockets`
 * holds the service's side of each connection the edge opened to it, and whether it has closed.
 */
async function serviceBehindEdge(keepAliveMs: number) {
  const serviceSockets: { closed: boolean }[] = [];
  const upstream = Fastify({ forceCloseConnections: true });
  upstream.get('/slow/api', async (request) => {
    await sleep(Number((request.query as { ms?: string }).ms ?? 0));
    return { ok: true };
  });
  upstream.server.on('connection', (socket: Socket) => {
    const entry = { closed: false };
    serviceSockets.push(entry);
    socket.once('close', () => {
      entry.closed = true;
    });
  });
  const upstreamUrl = await upstream.listen({ port: 0, host: '127.0.0.1' });
  const edge = await buildApp({
    config: loadConfig({
      EGGMESH_WRITE_API_URL: upstreamUrl,
      EGGMESH_READ_API_URL: 'http://127.0.0.1:9',
      EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS: String(keepAliveMs),
      EGGMESH_HTTP_HEADERS_TIMEOUT_MS: '500',
      EGGMESH_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    }),
  });
  const port = await listenOnFreePort(edge);
  const close = async () => {
    await edge.close();
    await upstream.close();
  };
  return { port, serviceSockets, close };
}

describe('edge: keep-alive, pool and forward timers', () => {
  let port = 0;
  let serviceSockets: { closed: boolean }[] = [];
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ port, serviceSockets, close } = await serviceBehindEdge(KEEP_ALIVE_MS));
  });
  afterAll(() => close());

  it('answers a forward slower than the keep-alive and pool idle times, then closes the idle connections', async () => {
    const client = new Client(port);
    // 800 ms: past the keep-alive timeout (700) and the pool's idle time (350), within the request timeout.
    expect(await client.get('/slow/api?ms=800')).toEqual({ status: 200, body: '{"ok":true}' });
    // Still open: a second request on it is answered.
    expect((await client.get('/slow/api?ms=0')).status).toBe(200);
    // Idle: the edge closes the client connection after the keep-alive timeout…
    expect(await within(client.closed, KEEP_ALIVE_MS * 3)).toBe(true);
    // …and its pooled connection to the service after the pool's idle time.
    expect(serviceSockets.length).toBeGreaterThan(0);
    expect(serviceSockets.every((s) => s.closed)).toBe(true);
  });

  it("counts a forward's deadline from its own start, not from an earlier forward's on the connection", async () => {
    const client = new Client(port);
    expect((await client.get('/slow/api?ms=0')).status).toBe(200);
    await sleep(500);
    // Ends 1,300 ms after the first forward began: within its own 1,000 ms, past the first one's.
    expect(await client.get('/slow/api?ms=800')).toEqual({ status: 200, body: '{"ok":true}' });
    client.socket.destroy();
  });

  it('still answers 504 when a forward outlasts the request timeout', async () => {
    const client = new Client(port);
    const answer = await client.get('/slow/api?ms=1500');
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'the write-api did not answer in time',
      code: 'EGGMESH_UPSTREAM_TIMEOUT',
    });
  });
});

describe("edge: a pooled connection lives until just before the service's keep-alive ends", () => {
  // 3 s: the pool keeps an idle connection 2 s (one second short), where half the keep-alive was 1.5 s.
  const keepAliveMs = 3000;
  let pair: Awaited<ReturnType<typeof serviceBehindEdge>>;
  beforeAll(async () => {
    pair = await serviceBehindEdge(keepAliveMs);
  });
  afterAll(() => pair.close());

  it('sends a write 1.7 s after the last one on the same connection, and closes it before the service would', async () => {
    const client = new Client(pair.port);
    expect((await client.get('/slow/api?ms=0')).status).toBe(200);
    await sleep(1700);
    expect((await client.get('/slow/api?ms=0')).status).toBe(200);
    // One connection to the service for both: the second did not wait for a new one.
    expect(pair.serviceSockets.length).toBe(1);
    client.socket.destroy();
    // The edge lets it go 2 s after its last use, before the service's own 3 s.
    await sleep(2400);
    expect(pair.serviceSockets[0]!.closed).toBe(true);
  });
});
