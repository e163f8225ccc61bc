import { IncomingMessage, type OutgoingHttpHeaders, ServerResponse, STATUS_CODES } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { EdgeError } from './errors.js';
import {
  CRLF2,
  FramingError,
  type RequestHead,
  type ResponseHead,
  ResponseReader,
  readRequestHead,
} from './framing.js';
import { badPath, errorAnswer, type ProxyLog, SERVICE, type Target } from './proxy.js';
import type { Upstream } from './routes.js';

/**
 * The edge's byte path. A forwarded request costs a process hop; through node:http (a server parsing
 * the request into objects, a client building another) that hop cost 1.2–1.5 ms a request at a low
 * rate, where a relay passing bytes cost under 0.1 ms (perf/README, round 13). So every connection the
 * edge accepts is read here first: a request with a plain head (read strictly by framing.ts: one
 * `Content-Length` or none, nothing a proxy must act on) bound for a service is passed on as bytes,
 * its head rewritten only for `X-Forwarded-For` and `Connection`, over a pooled connection, and the
 * answer's bytes are passed back as they come. What the edge answers in process (GraphQL, REST reads,
 * its own pages) goes to its node:http request listener: read whole, with the request and response
 * objects node:http would build, on the client's socket itself. Anything unusual (a head a proxy must do
 * more with, a body still arriving) goes to the edge's node:http server through a stream standing in for
 * the connection. Either way one request at a time and in order; a head the strict reader cannot frame
 * gives node:http the rest of the connection.
 */

export interface SpliceOptions {
  /** The service a request is passed on to as bytes, or undefined when node:http answers it. */
  readonly route: (method: string, path: string) => Upstream | undefined;
  readonly upstreams: Record<Upstream, Target>;
  readonly bodyLimitBytes: number;
  /** A service that has not answered in this long gets a 504 (and the connection closes). */
  readonly timeoutMs: number;
  /** An idle client connection closes after this long. */
  readonly keepAliveTimeoutMs: number;
  /** node:http's connection listener: it serves the stream it is given as a connection. */
  readonly http: (connection: Duplex) => void;
  /** node:http's request listener: answers a request the splice read whole (see Connection.#direct). */
  readonly serve: (request: IncomingMessage, response: ServerResponse) => void;
  /** Called once per request answered on the byte path (metrics). */
  readonly answered: (method: string, status: number, seconds: number) => void;
  /** Called once the write-api's answer to a forwarded request has been passed on whole. */
  readonly wrote?: () => void;
  readonly log: () => ProxyLog;
  readonly logRequests: boolean;
  readonly ownHeaders: (origin: string | undefined) => OutgoingHttpHeaders;
}

/** Client bytes buffered beyond the request being answered (pipelining) before the socket is paused. */
const MAX_BUFFERED = 64 * 1024;
/** The longest request head the byte path reads; node:http takes longer ones (and answers 431). */
const MAX_HEAD = 16 * 1024;
/** Idle connections kept per service. */
const MAX_IDLE = 256;

/** What a connection to a service reports to the forward using it. */
interface LinkUser {
  readonly data: (chunk: Buffer) => void;
  readonly error: (error: Error) => void;
  readonly end: () => void;
  readonly close: () => void;
}

/**
 * A keep-alive connection to a service. Its listeners are attached once, when it opens, and pass its
 * events on to the forward using it (`user`); while it waits in the pool (no user), bytes from it mean
 * it cannot be used again, and its close takes it out of the pool. Attaching four listeners per forward
 * and taking them off again cost about 50 µs of a forward at a low rate (perf/README.md, round 23).
 */
interface Link {
  readonly upstream: Upstream;
  readonly socket: Socket;
  user: LinkUser | undefined;
}

/**
 * How long a pooled connection to a service stays idle: just under the keep-alive timeout the services
 * read from the same setting, after which they close it. One second short (half of it, under 2 s), so
 * that a connection is never used as the service closes it. At half (5 s of 10), a write 5–10 s after
 * the last one through the edge waited for a new connection: 0.85 ms more at rest (perf/README.md,
 * round 24).
 */
const poolIdleMs = (keepAliveMs: number): number =>
  Math.max(100, keepAliveMs - Math.min(1000, Math.floor(keepAliveMs / 2)));

/** Idle keep-alive connections to the services, closed before the services would close them. */
class Pool {
  readonly #idle: Record<Upstream, Link[]> = { write: [], read: [] };
  constructor(
    private readonly targets: Record<Upstream, Target>,
    private readonly idleMs: number,
  ) {}

  /** An idle connection to `upstream`, or a new one; the caller sets its user before it yields. */
  take(upstream: Upstream): Link {
    const idle = this.#idle[upstream];
    for (let link = idle.pop(); link; link = idle.pop())
      if (!link.socket.destroyed && !link.socket.readableEnded) return link;
    const target = this.targets[upstream];
    const socket = connect({ host: target.hostname, port: target.port, noDelay: true });
    const link: Link = { upstream, socket, user: undefined };
    socket.on('data', (chunk: Buffer) => {
      if (link.user) link.user.data(chunk);
      else socket.destroy(); // bytes from an idle connection: it cannot be used again
    });
    // Errors are the user's; one between requests only closes the connection.
    socket.on('error', (error: Error) => link.user?.error(error));
    socket.on('end', () => link.user?.end());
    socket.on('close', () => {
      if (link.user) link.user.close();
      else this.#forget(link);
    });
    // The idle timer runs always (it restarts with every byte either way) and closes the connection
    // only while it waits in the pool: a request in flight has its own deadline. Setting and clearing
    // it per request cost more than the request's own work at a low rate (perf/README.md, round 21).
    socket.setTimeout(this.idleMs);
    socket.on('timeout', () => {
      if (!link.user) socket.destroy();
    });
    return link;
  }

  /** Closes a connection that will not be used again (its close then finds it in no list). */
  discard(link: Link): void {
    link.user = undefined;
    link.socket.destroy();
  }

  /** Back to the pool, its user gone. */
  give(link: Link): void {
    link.user = undefined;
    const idle = this.#idle[link.upstream];
    if (idle.length >= MAX_IDLE) link.socket.destroy();
    else idle.push(link);
  }

  #forget(link: Link): void {
    const idle = this.#idle[link.upstream];
    const at = idle.indexOf(link);
    if (at !== -1) idle.splice(at, 1);
  }

  close(): void {
    for (const list of Object.values(this.#idle)) for (const link of list.splice(0)) link.socket.destroy();
  }
}

/** The stream node:http serves as the connection: what it reads is pushed in, what it writes goes out. */
class Standin extends Duplex {
  constructor(
    private readonly real: Socket,
    private readonly onWrite: (chunk: Buffer) => void,
    private readonly onEnd: () => void,
    private readonly onDestroy: () => void,
  ) {
    super({ allowHalfOpen: true });
  }
  get remoteAddress() {
    return this.real.remoteAddress;
  }
  get remotePort() {
    return this.real.remotePort;
  }
  get remoteFamily() {
    return this.real.remoteFamily;
  }
  get localAddress() {
    return this.real.localAddress;
  }
  get localPort() {
    return this.real.localPort;
  }
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.onWrite(chunk);
    done();
  }
  /** node:http corks the connection while it writes an answer: its head and body leave in one write. */
  override _writev(
    chunks: { chunk: Buffer; encoding: BufferEncoding }[],
    done: (error?: Error | null) => void,
  ): void {
    this.onWrite(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map((c) => c.chunk)));
    done();
  }
  override _final(done: (error?: Error | null) => void): void {
    this.onEnd();
    done();
  }
  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.onDestroy();
    done(error);
  }
  /** The splice owns the socket's timers (node:http's request timeouts still apply: they run on a clock). */
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
}

/** How node:http's parser gives a request its headers (`rawHeaders`, and `headers` read from them). */
interface NodeRequest {
  _addHeaderLines(raw: string[], count: number): void;
}

/** Fields of node:http's `ServerResponse` that its own server sets and reads (not in its types). */
interface NodeResponse {
  /** The keep-alive timeout its `Keep-Alive` header announces (ms). */
  _keepAliveTimeout: number;
  /** Set once the head said `Connection: close`: the server closes the connection after the answer. */
  _last: boolean;
}

/** One of the edge's own answers (502, 504) as bytes; the connection closes after it. */
function errorBytes(error: EdgeError, extra: OutgoingHttpHeaders): Buffer {
  const { body, headers } = errorAnswer(error, extra);
  let head = `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}\r\n`;
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) head += `${name}: ${value}\r\n`;
  head += `date: ${new Date().toUTCString()}\r\nconnection: close\r\n\r\n`;
  return Buffer.from(head + body, 'latin1');
}

/** What node:http answers a request that did not arrive in time. */
const REQUEST_TIMEOUT = Buffer.from(
  'HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n',
);

/** Every connection the edge accepted, for shutdown. */
export class Splicer {
  readonly #open = new Set<Connection>();
  readonly #pool: Pool;
  #draining = false;

  constructor(readonly options: SpliceOptions) {
    this.#pool = new Pool(options.upstreams, poolIdleMs(options.keepAliveTimeoutMs));
  }

  get pool(): Pool {
    return this.#pool;
  }

  get draining(): boolean {
    return this.#draining;
  }

  accept(socket: Socket): void {
    const connection = new Connection(this, socket);
    this.#open.add(connection);
    socket.once('close', () => this.#open.delete(connection));
  }

  /** Shutdown: idle connections close now, busy ones after their answer; pooled ones close. */
  drain(): void {
    this.#draining = true;
    for (const connection of this.#open) connection.drain();
    this.#pool.close();
  }
}

/** A forwarded request on the byte path, until its answer has been passed on. */
interface Forward {
  /** The connection to the service (its `upstream` says which). */
  readonly link: Link;
  readonly reader: ResponseReader;
  readonly started: number;
  readonly head: RequestHead;
  /** The service answered (a first byte came back). */
  answered: boolean;
}

class Connection {
  readonly #socket: Socket;
  readonly #splicer: Splicer;
  readonly #o: SpliceOptions;
  /** Client bytes not yet passed on. */
  #buffer: Buffer | undefined;
  /** A request is being answered. */
  #busy = false;
  /** Body bytes of the current request still to come, and where they go. */
  #bodyLeft = 0;
  #sink: ((bytes: Buffer) => void) | undefined;
  #forward: Forward | undefined;
  /** The response node:http is writing for the request handed to it. */
  #httpReader: ResponseReader | undefined;
  #standin: Standin | undefined;
  /** The answer node:http's objects are writing on the socket (see #direct). */
  #response: ServerResponse | undefined;
  /** node:http has the connection from here on. */
  #handed = false;
  #closeAfter = false;
  /**
   * The forwards' deadline: one timer per connection, restarted (`refresh()`) for each forward and
   * left to run out after it; it acts only on the forward in flight when it fires.
   */
  #forwardTimer: NodeJS.Timeout | undefined;
  /** The client socket's timer when it is not the keep-alive timeout (a body drained after its answer). */
  #socketTimerMs: number;
  /** The `Keep-Alive` value the edge's answers carry (node:http's form). */
  readonly #keepAlive: string;

  constructor(splicer: Splicer, socket: Socket) {
    this.#splicer = splicer;
    this.#o = splicer.options;
    this.#keepAlive = `timeout=${Math.floor(this.#o.keepAliveTimeoutMs / 1000)}`;
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('end', () => this.#onEnd());
    socket.on('error', () => undefined);
    socket.on('close', () => this.#onClose());
    // The keep-alive timer runs always (every byte restarts it); it closes a connection that is idle,
    // not one whose request is being answered (that request has its own deadline).
    socket.on('timeout', () => {
      if (this.#handed || !this.#busy) socket.destroy();
    });
    // What node:http's server does for the answer on its socket: one that waits to write more resumes.
    socket.on('drain', () => {
      if (this.#response?.writableNeedDrain) this.#response.emit('drain');
    });
    socket.setTimeout(this.#o.keepAliveTimeoutMs);
    this.#socketTimerMs = this.#o.keepAliveTimeoutMs;
  }

  drain(): void {
    if (this.#handed) return; // node:http's own shutdown closes it
    if (this.#busy || this.#bodyLeft > 0) this.#closeAfter = true;
    else this.#socket.end();
  }

  #onData(chunk: Buffer): void {
    if (this.#handed) {
      this.#standin?.push(chunk);
      return;
    }
    if (this.#bodyLeft > 0) {
      const n = Math.min(this.#bodyLeft, chunk.length);
      this.#bodyLeft -= n;
      this.#sink?.(n === chunk.length ? chunk : chunk.subarray(0, n));
      if (n === chunk.length) {
        if (this.#bodyLeft === 0) this.#settled();
        return;
      }
      chunk = chunk.subarray(n);
    }
    this.#buffer = this.#buffer ? Buffer.concat([this.#buffer, chunk]) : chunk;
    if (this.#busy || this.#bodyLeft > 0) {
      if (this.#buffer.length > MAX_BUFFERED) this.#socket.pause();
      return;
    }
    this.#next();
  }

  #onEnd(): void {
    if (this.#handed) this.#standin?.push(null);
    // The client stopped sending with its request's body incomplete: it can never be answered.
    else if (this.#forward && this.#bodyLeft > 0) this.#socket.destroy();
    else if (this.#bodyLeft > 0 && this.#standin) {
      // node:http is reading that body: it sees the client's end (and answers or closes as it does).
      this.#closeAfter = true;
      this.#standin.push(null);
    } else if (this.#busy || this.#bodyLeft > 0) this.#closeAfter = true;
    else this.#socket.end();
  }

  #onClose(): void {
    if (this.#forwardTimer) clearTimeout(this.#forwardTimer);
    const forward = this.#forward;
    if (forward) {
      this.#release(forward);
      if (this.#bodyLeft > 0) {
        // The client went away before its request was complete: a client problem, as node:http's path logs it.
        this.#o
          .log()
          .info(
            { url: forward.head.target },
            'the client closed the connection before its request was complete',
          );
        this.#logRequest(forward, 400);
      }
    }
    this.#standin?.destroy();
  }

  /** Reads the next request from the buffer and sends it on its way. */
  #next(): void {
    const buffer = this.#buffer;
    if (!buffer || buffer.length === 0 || this.#busy || this.#handed) return;
    const end = buffer.indexOf(CRLF2);
    if (end === -1 || end > MAX_HEAD) {
      // A head in pieces (or too long): node:http reads the rest of the connection, with its own timeouts.
      this.#hand();
      return;
    }
    const head = readRequestHead(buffer.toString('latin1', 0, end));
    if (!head) {
      this.#hand();
      return;
    }
    const start = end + 4;
    const query = head.target.indexOf('?');
    const path = query === -1 ? head.target : head.target.slice(0, query);
    const upstream =
      head.plain && head.length <= this.#o.bodyLimitBytes && !badPath(path) && !this.#splicer.draining
        ? this.#o.route(head.method, path)
        : undefined;
    // While a request is answered its own timers run: the forward's deadline, node:http's request
    // timeouts; the keep-alive timer ignores a busy connection.
    this.#busy = true;
    if (head.close) this.#closeAfter = true;
    const available = Math.min(head.length, buffer.length - start);
    const body = buffer.subarray(start, start + available);
    this.#buffer = buffer.length > start + available ? buffer.subarray(start + available) : undefined;
    this.#bodyLeft = head.length - available;
    if (upstream) this.#pass(head, upstream, buffer.subarray(0, start), body);
    else if (head.plain && this.#bodyLeft === 0) this.#direct(head, body);
    else this.#toHttp(buffer.subarray(0, start), head, body);
  }

  /** Passes the request on to a service as bytes. */
  #pass(head: RequestHead, upstream: Upstream, headBytes: Buffer, body: Buffer): void {
    const started = performance.now();
    const o = this.#o;
    const target = o.upstreams[upstream];
    const client = this.#socket.remoteAddress;
    const chain =
      head.forwardedFor === undefined
        ? client
        : client
          ? `${head.forwardedFor}, ${client}`
          : head.forwardedFor;
    const link = this.#splicer.pool.take(upstream);
    const socket = link.socket;
    this.#sink = (bytes) => socket.write(bytes);
    // One write (writev) of the pieces, without copying them into one buffer first. What the answer
    // needs is set up after it: the answer cannot come before this turn of the loop ends.
    socket.cork();
    if (head.asSent && target.prefix === '') {
      // The common case: the head as the client sent it, one line added.
      socket.write(headBytes.subarray(0, headBytes.length - 2));
      socket.write(chain === undefined ? '\r\n' : `x-forwarded-for: ${chain}\r\n\r\n`, 'latin1');
    } else {
      let text = `${head.method} ${target.prefix}${head.target} HTTP/1.1\r\n`;
      for (const line of head.lines) text += `${line}\r\n`;
      if (chain !== undefined) text += `x-forwarded-for: ${chain}\r\n`;
      socket.write(`${text}\r\n`, 'latin1');
    }
    if (body.length > 0) socket.write(body);
    socket.uncork();
    const reader = new ResponseReader(head.method === 'HEAD', (bytes, responseHead) => {
      const out = responseHead ? this.#rewrite(responseHead, reader, bytes) : bytes;
      if (!this.#socket.write(out) && !socket.isPaused()) {
        socket.pause();
        this.#socket.once('drain', () => socket.resume());
      }
    });
    const forward: Forward = { link, reader, started, head, answered: false };
    this.#forward = forward;
    if (this.#forwardTimer) this.#forwardTimer.refresh();
    else this.#forwardTimer = setTimeout(() => this.#deadline(), o.timeoutMs).unref();
    link.user = {
      data: (chunk: Buffer) => {
        if (this.#forward !== forward) return;
        forward.answered = true;
        let used: number;
        // The head (rewritten) and the body of a chunk leave in one write.
        this.#socket.cork();
        try {
          used = reader.feed(chunk);
        } catch (error) {
          if (!(error instanceof FramingError)) throw error;
          this.#failed(forward, false, error);
          return;
        } finally {
          this.#socket.uncork();
        }
        if (reader.done) this.#answered(forward, used === chunk.length);
      },
      error: (error: Error) => this.#failed(forward, false, error),
      end: () => {
        if (this.#forward !== forward) return;
        if (reader.untilClose) this.#answered(forward, false);
        else this.#failed(forward, false);
      },
      close: () => this.#failed(forward, false),
    };
  }

  /** The forward deadline's timer ran out: the forward in flight (if any) has had its time. */
  #deadline(): void {
    const forward = this.#forward;
    if (!forward) return;
    const left = this.#o.timeoutMs - (performance.now() - forward.started);
    if (left > 1) this.#forwardTimer = setTimeout(() => this.#deadline(), left).unref();
    else this.#timedOut(forward);
  }

  /** The answer's head for the client: its own `Connection` (and `Keep-Alive`), the rest as the service sent it. */
  #rewrite(head: ResponseHead, reader: ResponseReader, bytes: Buffer): Buffer {
    if (head.close || reader.untilClose || this.#splicer.draining) this.#closeAfter = true;
    // The service keeps its connections as the edge keeps the client's: its head goes as it is.
    if (!this.#closeAfter && head.keepAlive === this.#keepAlive) return bytes;
    let text = `HTTP/1.1 ${head.status} ${STATUS_CODES[head.status] ?? ''}\r\n`;
    for (const line of head.lines) {
      const name = line.slice(0, line.indexOf(':')).toLowerCase();
      if (name !== 'connection' && name !== 'keep-alive') text += `${line}\r\n`;
    }
    text += this.#closeAfter
      ? 'connection: close\r\n\r\n'
      : `connection: keep-alive\r\nkeep-alive: ${this.#keepAlive}\r\n\r\n`;
    return Buffer.from(text, 'latin1');
  }

  /** The forward is over: the connection to the service goes back to the pool if `keep`, else it closes. */
  #release(forward: Forward, keep = false): void {
    this.#forward = undefined;
    if (keep) this.#splicer.pool.give(forward.link);
    else this.#splicer.pool.discard(forward.link);
  }

  /** Counts the answer (metrics) and logs it when requests are logged. */
  #record(forward: Forward, status: number): void {
    this.#o.answered(forward.head.method, status, (performance.now() - forward.started) / 1000);
    this.#logRequest(forward, status);
  }

  #logRequest(forward: Forward, status: number): void {
    if (!this.#o.logRequests) return;
    this.#o.log().info(
      {
        req: { method: forward.head.method, url: forward.head.target },
        res: { statusCode: status },
        responseTime: performance.now() - forward.started,
        upstream: SERVICE[forward.link.upstream],
      },
      'request completed',
    );
  }

  /** The edge answers the request itself (408, 502, 504) and closes the connection. */
  #closeWith(forward: Forward, status: number, bytes: Buffer): void {
    this.#record(forward, status);
    this.#sink = undefined;
    this.#bodyLeft = 0;
    this.#socket.end(bytes);
  }

  /** The service's answer has been passed on whole. */
  #answered(forward: Forward, reusable: boolean): void {
    const reader = forward.reader;
    this.#release(forward, reusable && !reader.head?.close && !reader.untilClose && this.#bodyLeft === 0);
    this.#record(forward, reader.head?.status ?? 0);
    if (forward.link.upstream === 'write') this.#o.wrote?.();
    // A body the service answered before reading it all is read and dropped.
    this.#sink = undefined;
    if (this.#bodyLeft > 0) this.#setSocketTimer(this.#o.timeoutMs);
    this.#done();
  }

  /**
   * The request timeout ran out: a client still sending its body gets node:http's 408 (a client
   * problem, as the services answer it), otherwise the service was too slow (504).
   */
  #timedOut(forward: Forward): void {
    if (this.#forward !== forward) return;
    if (this.#bodyLeft === 0 || forward.answered) {
      this.#failed(forward, true);
      return;
    }
    this.#release(forward);
    this.#closeWith(forward, 408, REQUEST_TIMEOUT);
  }

  /** The service did not answer (or broke off): a 502/504 when nothing was passed on yet. */
  #failed(forward: Forward, timedOut: boolean, error?: Error): void {
    if (this.#forward !== forward) return;
    this.#release(forward);
    if (forward.answered) {
      this.#socket.destroy();
      return;
    }
    const service = SERVICE[forward.link.upstream];
    const target = this.#o.upstreams[forward.link.upstream];
    this.#o
      .log()
      .warn(
        { err: error, service, upstream: `${target.hostname}:${target.port}` },
        timedOut ? `${service} did not answer in time` : `${service} did not answer`,
      );
    const answer = timedOut
      ? new EdgeError('EGGMESH_UPSTREAM_TIMEOUT', `the ${service} did not answer in time`)
      : new EdgeError('EGGMESH_UPSTREAM_UNAVAILABLE', `the ${service} did not answer`);
    this.#closeWith(forward, answer.statusCode, errorBytes(answer, this.#o.ownHeaders(forward.head.origin)));
  }

  #standinFor(): Standin {
    if (this.#standin && !this.#standin.destroyed) return this.#standin;
    const standin = new Standin(
      this.#socket,
      (chunk) => {
        if (this.#standin !== standin) return;
        // node:http ends every answer with an empty write: no system call for it.
        if (chunk.length > 0) this.#socket.write(chunk);
        const reader = this.#httpReader;
        if (!reader) return;
        try {
          reader.feed(chunk);
        } catch {
          this.#socket.destroy();
          return;
        }
        if (reader.done) {
          this.#httpReader = undefined;
          // Not inside node:http's own write: the next request may be pushed to it.
          process.nextTick(() => this.#done());
        }
      },
      // node:http closes the connection (it answered `Connection: close`, or refused the request).
      () => {
        if (this.#standin === standin) this.#socket.end();
      },
      () => {
        if (this.#standin !== standin) return;
        this.#standin = undefined;
        this.#httpReader = undefined;
        // node:http let go of a connection it saw idle (shutdown) while a forward runs: close after it.
        if (this.#forward && !this.#handed) this.#closeAfter = true;
        else this.#socket.destroy();
      },
    );
    this.#standin = standin;
    this.#o.http(standin);
    return standin;
  }

  /**
   * The edge's own server answers a request the splice has read whole, on the client's socket itself:
   * the request and response objects node:http would build for it, without node:http reading the bytes
   * again through the stand-in (a second parse, a JS stream each way, and a reader to find the answer's
   * end: about a quarter of the edge's CPU on a GraphQL getById, perf/README round 20).
   */
  #direct(head: RequestHead, body: Buffer): void {
    const socket = this.#socket;
    const request = new IncomingMessage(socket) as IncomingMessage & NodeRequest;
    request.httpVersionMajor = 1;
    request.httpVersionMinor = 1;
    request.httpVersion = '1.1';
    request.method = head.method;
    request.url = head.target;
    request._addHeaderLines(head.raw, head.raw.length);
    if (body.length > 0) request.push(body);
    request.push(null);
    request.complete = true;
    const response = new ServerResponse<IncomingMessage>(request) as ServerResponse & NodeResponse;
    response.shouldKeepAlive = !this.#closeAfter && !this.#splicer.draining;
    // What node:http's server sets on its responses: the `Keep-Alive: timeout=…` it announces.
    response._keepAliveTimeout = this.#o.keepAliveTimeoutMs;
    response.assignSocket(socket);
    this.#response = response;
    response.once('finish', () => {
      this.#response = undefined;
      response.detachSocket(socket);
      // The answer said `Connection: close` (the client asked, or the handler decided).
      if (response._last) this.#closeAfter = true;
      // An unread body is dropped, as node:http does.
      if (!request.readableEnded) request.resume();
      process.nextTick(() => response.emit('close'));
      this.#done();
    });
    this.#o.serve(request, response);
  }

  /** node:http answers this request (read from the connection through the stand-in). */
  #toHttp(headBytes: Buffer, head: RequestHead, body: Buffer): void {
    const standin = this.#standinFor();
    this.#httpReader = new ResponseReader(head.method === 'HEAD', () => undefined);
    this.#sink = (bytes) => {
      if (!standin.destroyed) standin.push(bytes);
    };
    standin.push(body.length > 0 ? Buffer.concat([headBytes, body]) : headBytes);
  }

  /** node:http takes the rest of the connection. */
  #hand(): void {
    const standin = this.#standinFor();
    this.#handed = true;
    this.#setSocketTimer(0);
    const buffer = this.#buffer;
    this.#buffer = undefined;
    if (buffer) standin.push(buffer);
    this.#socket.resume();
  }

  /** The current answer is complete. */
  #done(): void {
    this.#busy = false;
    this.#settled();
  }

  /** Once the answer and the request's body are both through: the next request, or the end. */
  #settled(): void {
    if (this.#busy || this.#bodyLeft > 0) return;
    this.#sink = undefined;
    if (this.#closeAfter) {
      this.#buffer = undefined;
      this.#socket.end();
      return;
    }
    this.#setSocketTimer(this.#o.keepAliveTimeoutMs);
    if (this.#socket.isPaused()) this.#socket.resume();
    this.#next();
  }

  /** The client socket's timer, changed only when it differs (a change costs more than it looks). */
  #setSocketTimer(ms: number): void {
    if (this.#socketTimerMs === ms) return;
    this.#socketTimerMs = ms;
    this.#socket.setTimeout(ms);
  }
}
