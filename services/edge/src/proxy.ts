import {
  Agent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { EdgeError } from './errors.js';
import type { Upstream } from './routes.js';

/**
 * Headers that describe one connection, not the request (RFC 9110 §7.6.1), so a proxy must not pass
 * them on (nor the ones a `Connection` header names). Node's server already answered `100 Continue`.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'expect',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

export const SERVICE: Record<Upstream, string> = { write: 'write-api', read: 'read-api' };

/** Responses up to this size (with a Content-Length) are sent in one write; larger ones stream. */
const BUFFER_MAX_BYTES = 1024 * 1024;

export interface ProxyLog {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}

export interface ProxyOptions {
  readonly upstreams: { readonly write: string; readonly read: string };
  readonly bodyLimitBytes: number;
  /** A service that has not answered (or gone silent) this long gets a 504. */
  readonly timeoutMs: number;
  readonly log: () => ProxyLog;
  readonly logRequests: boolean;
  /** Headers the edge's own answers carry (CORS), from the request's `Origin`. */
  readonly ownHeaders: (origin: string | undefined) => OutgoingHttpHeaders;
}

export interface Target {
  readonly hostname: string;
  readonly port: number;
  /** The upstream's path prefix (usually empty). */
  readonly prefix: string;
}

export const targetOf = (base: string): Target => {
  const url = new URL(base);
  return {
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port || 80),
    prefix: url.pathname === '/' ? '' : url.pathname.replace(/\/$/, ''),
  };
};

/** Lower-case names of the headers a `Connection` header lists, beyond keep-alive and close; undefined when none. */
function namedByConnection(raw: readonly string[]): Set<string> | undefined {
  let named: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 10 || name.toLowerCase() !== 'connection') continue;
    for (const token of raw[i + 1]!.split(',')) {
      const h = token.trim().toLowerCase();
      if (h === '' || h === 'keep-alive' || h === 'close') continue;
      named ??= new Set();
      named.add(h);
    }
  }
  return named;
}

/**
 * The headers to pass on, as a flat [name, value, …] array straight from `rawHeaders` (what node:http
 * takes as is, with repeated headers kept apart and no object built): hop-by-hop ones dropped, and
 * `drop` (already lower-case) too.
 */
function forwardedRawHeaders(raw: readonly string[], drop?: string): string[] {
  const named = namedByConnection(raw);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower === drop || named?.has(lower)) continue;
    out.push(name, raw[i + 1]!);
  }
  return out;
}

/**
 * The request's headers for the service, with the client's address appended to `x-forwarded-for`:
 * the services trust it from a loopback peer, so their rate limit counts the client, not the edge.
 */
function requestHeaders(request: IncomingMessage): string[] {
  const out = forwardedRawHeaders(request.rawHeaders, 'x-forwarded-for');
  const client = request.socket.remoteAddress;
  const given = request.headers['x-forwarded-for'];
  const prior = Array.isArray(given) ? given.join(', ') : given;
  const chain = prior === undefined ? client : client ? `${prior}, ${client}` : prior;
  if (chain !== undefined) out.push('x-forwarded-for', chain);
  return out;
}

/** Writes one of the edge's own error answers, unless the response has started. */
export function writeError(
  response: ServerResponse,
  error: EdgeError,
  extraHeaders: OutgoingHttpHeaders = {},
): void {
  if (response.headersSent || response.destroyed) {
    response.destroy();
    return;
  }
  const { body, headers } = errorAnswer(error, extraHeaders);
  // The rest of a refused upload would otherwise have to be read before the connection can be reused.
  if (error.statusCode === 413) headers.connection = 'close';
  response.writeHead(error.statusCode, headers);
  response.end(body);
}

/** The body and headers of one of the edge's own error answers (node:http's path and the byte path). */
export function errorAnswer(
  error: EdgeError,
  extraHeaders: OutgoingHttpHeaders,
): { body: string; headers: OutgoingHttpHeaders } {
  const body = JSON.stringify(error.toBody());
  return {
    body,
    headers: {
      ...extraHeaders,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    },
  };
}

export const tooLarge = (limit: number) =>
  new EdgeError(
    'EGGMESH_BODY_TOO_LARGE',
    `the body is larger than ${limit} bytes (EGGMESH_BODY_LIMIT_BYTES)`,
  );

/** A path the edge cannot forward as is (a malformed percent-encoding): 400, as Fastify would. */
export function badPath(path: string): boolean {
  if (!path.includes('%')) return false;
  try {
    decodeURIComponent(path);
    return false;
  } catch {
    return true;
  }
}

/**
 * The forwarding path for what the byte path (splice.ts) leaves to node:http (chunked or oversized
 * bodies, `Expect`, headers a `Connection` header names, requests Fastify's inject() sends in tests),
 * on bare `node:http`: one keep-alive agent per service, headers copied once
 * (hop-by-hop ones dropped), the request body piped through (counted against the body limit when it
 * has no length), and the answer written back in one write when it has a length. No framework, no
 * per-request allocation beyond the header object and the upstream request.
 */
export class Forwarder {
  readonly #agent: Agent;
  readonly #targets: Record<Upstream, Target>;
  readonly #options: ProxyOptions;

  constructor(options: ProxyOptions) {
    this.#options = options;
    this.#targets = { write: targetOf(options.upstreams.write), read: targetOf(options.upstreams.read) };
    this.#agent = new Agent({
      keepAlive: true,
      keepAliveMsecs: 1000,
      maxSockets: 256,
      maxFreeSockets: 256,
      scheduling: 'lifo',
      noDelay: true,
    });
  }

  close(): void {
    this.#agent.destroy();
  }

  handle(request: IncomingMessage, response: ServerResponse, upstream: Upstream): void {
    const o = this.#options;
    const started = o.logRequests ? performance.now() : 0;
    const url = request.url ?? '/';
    const service = SERVICE[upstream];
    let status = 0;
    const done = (code: number) => {
      status = code;
      if (o.logRequests) {
        o.log().info(
          {
            req: { method: request.method, url },
            res: { statusCode: code },
            responseTime: performance.now() - started,
            upstream: service,
          },
          'request completed',
        );
      }
    };
    const fail = (error: EdgeError) => {
      if (status !== 0) return;
      writeError(response, error, o.ownHeaders(request.headers.origin));
      done(error.statusCode);
    };
    const declared = request.headers['content-length'];
    if (declared !== undefined && Number(declared) > o.bodyLimitBytes) {
      // Read (and drop) what the client still sends, so it gets the 413 rather than a reset.
      linger(request, o.timeoutMs, () => fail(tooLarge(o.bodyLimitBytes)));
      return;
    }
    const query = url.indexOf('?');
    if (badPath(query === -1 ? url : url.slice(0, query))) {
      request.resume();
      fail(new EdgeError('EGGMESH_BAD_REQUEST', 'bad request: malformed percent-encoding in the URL'));
      return;
    }
    const target = this.#targets[upstream];
    const outgoing = httpRequest({
      agent: this.#agent,
      hostname: target.hostname,
      port: target.port,
      method: request.method,
      path: target.prefix + url,
      headers: requestHeaders(request),
      timeout: o.timeoutMs,
    });
    let timedOut = false;
    // Set once the edge stopped forwarding for its own reason (client gone, body too large).
    let dropped = false;
    outgoing.on('timeout', () => {
      timedOut = true;
      outgoing.destroy();
    });
    outgoing.on('error', (error) => {
      if (dropped) return;
      if (response.headersSent) {
        response.destroy();
        return;
      }
      o.log().warn(
        { err: error, service, upstream: `${target.hostname}:${target.port}` },
        timedOut ? `${service} did not answer in time` : `${service} did not answer`,
      );
      fail(
        timedOut
          ? new EdgeError('EGGMESH_UPSTREAM_TIMEOUT', `the ${service} did not answer in time`)
          : new EdgeError('EGGMESH_UPSTREAM_UNAVAILABLE', `the ${service} did not answer`),
      );
    });
    outgoing.on('response', (answer) => {
      if (dropped) {
        answer.resume();
        return;
      }
      // The service's Date goes too: this server adds its own.
      const headers = forwardedRawHeaders(answer.rawHeaders, 'date');
      const code = answer.statusCode ?? 502;
      const length = Number(answer.headers['content-length']);
      if (Number.isFinite(length) && length <= BUFFER_MAX_BYTES) {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          if (response.destroyed) return;
          response.writeHead(code, headers);
          response.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
          done(code);
        });
      } else {
        response.writeHead(code, headers);
        answer.pipe(response);
        answer.on('end', () => done(code));
      }
      answer.on('error', () => response.destroy());
    });
    // The client went away before its request was complete (an abandoned upload): a client problem,
    // logged at info; the forward is dropped.
    response.on('close', () => {
      if (response.writableFinished || request.complete || dropped) return;
      dropped = true;
      outgoing.destroy();
      o.log().info({ url }, 'the client closed the connection before its request was complete');
      fail(
        new EdgeError(
          'EGGMESH_BAD_REQUEST',
          'the client closed the connection before its request was complete',
        ),
      );
    });
    if (declared === undefined && request.headers['transfer-encoding'] !== undefined) {
      // No length announced: count the body as it passes, 413 once it grows past the limit.
      let seen = 0;
      const onData = (chunk: Buffer) => {
        seen += chunk.length;
        if (seen <= o.bodyLimitBytes) {
          outgoing.write(chunk);
          return;
        }
        request.off('data', onData);
        request.off('end', onEnd);
        dropped = true;
        outgoing.destroy();
        linger(request, o.timeoutMs, () => fail(tooLarge(o.bodyLimitBytes)));
      };
      const onEnd = () => outgoing.end();
      request.on('data', onData);
      request.on('end', onEnd);
    } else if (declared === undefined || declared === '0') {
      outgoing.end();
    } else {
      request.pipe(outgoing);
    }
  }
}

/** How much of a refused body the edge reads (and drops) so that its client gets the 413. */
const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Runs `then` once the client has sent the rest of a refused body, or `maxMs` / 64 MiB later at most:
 * closing a socket with unread data makes the kernel reset it, and the client would lose the answer.
 */
function linger(request: IncomingMessage, maxMs: number, then: () => void): void {
  if (request.complete || request.destroyed) {
    then();
    return;
  }
  let seen = 0;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    request.off('data', count);
    then();
  };
  const count = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > LINGER_MAX_BYTES) finish();
  };
  const timer = setTimeout(finish, Math.min(maxMs, 10_000));
  request.on('data', count);
  request.once('end', finish);
  request.once('error', finish);
  request.once('close', finish);
  request.resume();
}
