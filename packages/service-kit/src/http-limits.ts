import { type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import proxyAddr from '@fastify/proxy-addr';
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { EggmeshError, type ErrorCode } from './errors.js';

export interface LimitsLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/**
 * Applies the client limits of `config.http` to a Node HTTP server before it listens. The timeouts are
 * Node's own server settings (set here because not every service builds its app with serviceApp()):
 * a client gets `headersTimeoutMs` for its headers and `requestTimeoutMs` for the whole request (else
 * 408 and the connection closes), a socket silent a little longer than that closes, an idle
 * keep-alive connection closes after `keepAliveTimeoutMs`, and connections beyond `maxConnections` are
 * closed on accept. What Node has no setting for is done here: a client address (not a trusted proxy)
 * past `config.http.maxConnectionsPerClient` (IPv6 per /64) has its new connections closed on accept; both refusals are logged at
 * most every 10 s; and a body declared too large with `Expect: 100-continue` is refused before upload.
 */
export function applyHttpLimits(
  server: Server,
  config: Pick<Config, 'http' | 'trustedProxies' | 'bodyLimitBytes'>,
  log: LimitsLogger,
): void {
  const { http, bodyLimitBytes } = config;
  server.headersTimeout = http.headersTimeoutMs;
  server.requestTimeout = http.requestTimeoutMs;
  server.keepAliveTimeout = http.keepAliveTimeoutMs;
  server.maxConnections = http.maxConnections;
  // Node enforces the two request timeouts on a timer (30 s by default, read when the server starts
  // listening), so a 10 s limit could otherwise stretch to 40 s. A check a second costs nothing.
  const checkEveryMs = Math.max(10, Math.min(1000, Math.floor(http.headersTimeoutMs / 4)));
  Object.assign(server, { connectionsCheckingInterval: checkEveryMs });
  // A silent socket closes without an answer, so it must outlast the request timeout's check, which
  // answers a request still arriving with 408: silence mid-request is no longer than the request.
  server.setTimeout(http.requestTimeoutMs + 2 * checkEveryMs);
  const refusals = { total: 0, perClient: 0, loggedAt: 0 };
  const refused = (perClient: boolean) => {
    refusals.total += 1;
    if (perClient) refusals.perClient += 1;
    const now = Date.now();
    if (now - refusals.loggedAt < 10_000) return;
    log.warn(
      {
        dropped: refusals.total,
        overClientCap: refusals.perClient,
        maxConnections: http.maxConnections,
        perClient: http.maxConnectionsPerClient,
      },
      'connection limit reached: closing new connections (EGGMESH_HTTP_MAX_CONNECTIONS, per client address)',
    );
    refusals.loggedAt = now;
    refusals.total = 0;
    refusals.perClient = 0;
  };
  server.on('drop', () => refused(false));
  const perClient = http.maxConnectionsPerClient;
  const trusted = proxyAddr.compile([...config.trustedProxies]);
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trusted(address, 0)) return;
    const key = normalizeIP(address);
    const count = (open.get(key) ?? 0) + 1;
    if (count > perClient) {
      socket.destroy();
      refused(true);
      return;
    }
    open.set(key, count);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left === 0) open.delete(key);
      else open.set(key, left);
    });
  });
  // `Expect: 100-continue` asks before sending the body: a body declared larger than the limit is refused
  // then (413, no 100), so the client never uploads it. Answering 413 after a 100 Continue would close the
  // socket under a client still uploading, which it sees as a reset rather than the answer.
  server.on('checkContinue', (request, response) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > bodyLimitBytes) {
      const body = JSON.stringify({
        error: `the request body is larger than ${bodyLimitBytes} bytes`,
        code: 'EGGMESH_BODY_TOO_LARGE' satisfies ErrorCode,
      });
      response.writeHead(413, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      response.end(body);
      return;
    }
    response.writeContinue();
    server.emit('request', request, response);
  });
}

/**
 * The most bytes of request line and headers the write-api and the read-api (which forwards REST writes
 * to it) accept, the same on both so that a request gets the same answer at either port: room for a
 * bulk GET of `bulkMaxItems` UUIDs (37 bytes each) plus ordinary headers, and never less than Node's
 * default (16 KiB). Past it: 431 EGGMESH_HEADERS_TOO_LARGE.
 */
export const maxHeaderBytes = (config: Pick<Config, 'bulkMaxItems'>): number =>
  Math.max(16_384, config.bulkMaxItems * 37 + 8_192);

/** What Node's HTTP server reports on `clientError`, and the code each gets. */
const CLIENT_ERRORS: Readonly<Record<string, ErrorCode>> = {
  HPE_HEADER_OVERFLOW: 'EGGMESH_HEADERS_TOO_LARGE',
  // The headers or the whole request outlasted headersTimeout / requestTimeout.
  ERR_HTTP_REQUEST_TIMEOUT: 'EGGMESH_REQUEST_TIMEOUT',
};

/**
 * Fastify's `clientErrorHandler` for every service: a request Node's parser refuses never reaches a
 * route (a malformed request line or header, headers or a URL over the size limit, a request slower
 * than the timeouts), and is answered here in the services' error format (`EGGMESH_HEADERS_TOO_LARGE`,
 * 431, `EGGMESH_REQUEST_TIMEOUT`, 408, or `EGGMESH_BAD_REQUEST`, 400), and the connection closes:
 * after a parse error the rest of its bytes cannot be framed.
 */
export function answerClientError(error: Error, socket: Duplex): void {
  if (!socket.writable) return;
  const answer = new EggmeshError(
    CLIENT_ERRORS[(error as { code?: string }).code ?? ''] ?? 'EGGMESH_BAD_REQUEST',
  );
  const body = JSON.stringify(answer.toBody());
  socket.end(
    `HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode]}\r\nConnection: close\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** How much of a refused body a server reads (and drops) so that its client gets the 413. */
const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Answers a refused upload (413 before the body was read) only once the client has sent the rest of
 * it, or `maxMs` / 64 MiB later at most. Closing a socket with unread data makes the kernel reset it,
 * and a client still uploading then loses the 413 already on its way (it sees "connection reset").
 */
export function lingerOnRefusedBody(app: FastifyInstance, maxMs: number): void {
  // Callback-style: an async hook would cost every answer a promise for the rare 413.
  app.addHook('onSend', (request, reply, payload, next) => {
    const raw = request.raw;
    if (reply.statusCode !== 413 || raw.complete || raw.destroyed) {
      next(null, payload);
      return;
    }
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      raw.off('data', count);
      raw.off('end', done);
      raw.off('error', done);
      raw.off('close', done);
      next(null, payload);
    };
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > LINGER_MAX_BYTES) done();
    };
    const timer = setTimeout(done, maxMs);
    raw.on('data', count);
    raw.once('end', done);
    raw.once('error', done);
    raw.once('close', done);
    raw.resume();
  });
}
