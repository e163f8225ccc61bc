/**
 * HTTP/1.1 message framing for the edge's byte path (splice.ts): a strict reader of request heads from
 * clients, and a reader that finds where a response from a service (or from the edge's own node:http
 * server) ends. Only framing and the few headers a proxy must act on are read; the bytes themselves are
 * passed on as they came.
 */

/** Header names (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Header values: visible ASCII, space, tab and obs-text; no control characters. */
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** `METHOD /origin-form HTTP/1.1`, the target visible ASCII only. */
const REQUEST_LINE = /^([A-Z]+) (\/[!-~]*) HTTP\/1\.1$/;
const LENGTH = /^\d{1,15}$/;
const EDGE_SPACE = /^[ \t]+|[ \t]+$/g;

/** Request headers that ask a proxy for more than passing bytes on: the edge's node:http path takes those. */
const NOT_SPLICED = new Set(['te', 'trailer', 'keep-alive', 'proxy-connection', 'http2-settings']);

export const CRLF2 = Buffer.from('\r\n\r\n');

/** A request head the byte path understood. */
export interface RequestHead {
  readonly method: string;
  /** The request target as sent (path and query). */
  readonly target: string;
  /** Header lines to pass on ("Name: value"), without `Connection` and `X-Forwarded-For`. */
  readonly lines: readonly string[];
  /** Every header as node:http's `rawHeaders` has it: [name, value, …], values without surrounding blanks. */
  readonly raw: string[];
  /** Body bytes that follow the head (`Content-Length`, 0 without). */
  readonly length: number;
  /** The client asked to close the connection after this answer. */
  readonly close: boolean;
  readonly origin: string | undefined;
  /** The `X-Forwarded-For` chain the client sent (repeated headers joined). */
  readonly forwardedFor: string | undefined;
  /**
   * The head can be passed on as sent, with an `X-Forwarded-For` line added: it has none, and no
   * `Connection` header but `keep-alive`.
   */
  readonly asSent: boolean;
  /**
   * Whether the byte path may forward it: false for headers that need more than bytes passed on (a
   * `Connection` naming other headers, `TE`, …) or without exactly one `Host`; node:http answers those.
   */
  readonly plain: boolean;
}

/**
 * Reads a request head (the text before CRLFCRLF) strictly. Undefined when its framing is anything but
 * a `Content-Length` (or no body): no `Transfer-Encoding`, `Expect` or `Upgrade`, no folded or malformed
 * line, one length at most, HTTP/1.1 only. The caller then leaves the connection to node:http, whose
 * parser decides what the bytes mean: the two never disagree on where a request ends.
 */
export function readRequestHead(text: string): RequestHead | undefined {
  const lines = text.split('\r\n');
  const first = REQUEST_LINE.exec(lines[0]!);
  if (!first || first[1] === 'CONNECT') return undefined;
  const out: string[] = [];
  const raw: string[] = [];
  let length = -1;
  let hosts = 0;
  let close = false;
  let plain = true;
  let origin: string | undefined;
  let forwardedFor: string | undefined;
  let asSent = true;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) return undefined;
    const value = line.slice(colon + 1).replace(EDGE_SPACE, '');
    if (!VALUE.test(value)) return undefined;
    raw.push(name, value);
    const lower = name.toLowerCase();
    switch (lower) {
      case 'content-length':
        if (length !== -1 || !LENGTH.test(value)) return undefined;
        length = Number(value);
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return undefined;
      case 'host':
        hosts += 1;
        break;
      case 'origin':
        origin = value;
        break;
      case 'connection':
        for (const token of value.split(',')) {
          const t = token.trim().toLowerCase();
          if (t === 'close') close = true;
          else if (t !== '' && t !== 'keep-alive') plain = false;
        }
        if (close) asSent = false;
        continue;
      case 'x-forwarded-for':
        asSent = false;
        forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`;
        continue;
      default:
        if (NOT_SPLICED.has(lower)) plain = false;
    }
    out.push(line);
  }
  return {
    method: first[1]!,
    target: first[2]!,
    lines: out,
    raw,
    length: Math.max(0, length),
    close,
    origin,
    forwardedFor,
    asSent,
    plain: plain && hosts === 1,
  };
}

/** What a response head says about the body after it. */
export interface ResponseHead {
  readonly status: number;
  /** The head's header lines ("Name: value"). */
  readonly lines: readonly string[];
  /** The service will close its connection after this answer. */
  readonly close: boolean;
  /** The head says `Connection: keep-alive` and this `Keep-Alive` value (undefined: it does not). */
  readonly keepAlive: string | undefined;
}

enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailer,
  UntilClose,
  Done,
}

/** The longest response head read (a service's heads are a few hundred bytes). */
const MAX_RESPONSE_HEAD = 64 * 1024;

export class FramingError extends Error {}

/**
 * Follows one response through the bytes that carry it: its head, then a body framed by
 * `Content-Length`, chunked coding or the connection's end (RFC 9112 §6.3), 1xx interim answers passed
 * over. `feed` returns how many bytes of a chunk belong to the response; `done` turns true at its end.
 * Every byte of the response goes to `out` as it is read; the final head's bytes come with the head
 * read from them, so the caller may write other bytes in their place.
 */
export class ResponseReader {
  done = false;
  /** The body runs until the connection closes (no length, no chunked coding). */
  untilClose = false;
  head: ResponseHead | undefined;
  #state = State.Head;
  #pending: Buffer | undefined;
  #left = 0;
  #line = '';

  constructor(
    private readonly headRequest: boolean,
    /** Takes the response's bytes in order; `head` is given with the bytes of the final head. */
    private readonly out: (bytes: Buffer, head: ResponseHead | undefined) => void,
  ) {}

  /** Reads `chunk`; returns how many of its bytes belong to this response (the rest follow it). */
  feed(chunk: Buffer): number {
    let at = 0;
    while (at < chunk.length && this.#state !== State.Done) {
      switch (this.#state) {
        case State.Head: {
          const bytes = this.#pending
            ? Buffer.concat([this.#pending, chunk.subarray(at)])
            : chunk.subarray(at);
          const end = bytes.indexOf(CRLF2);
          if (end === -1) {
            if (bytes.length > MAX_RESPONSE_HEAD) throw new FramingError('response head too long');
            this.#pending = Buffer.from(bytes);
            return chunk.length;
          }
          const before = this.#pending?.length ?? 0;
          this.#pending = undefined;
          const headBytes = bytes.subarray(0, end + 4);
          at += end + 4 - before;
          this.#begin(headBytes);
          break;
        }
        case State.Length:
        case State.ChunkData:
        case State.ChunkEnd: {
          // A counted run of bytes: the body, a chunk's data, or the CRLF after it.
          const n = Math.min(this.#left, chunk.length - at);
          this.out(chunk.subarray(at, at + n), undefined);
          at += n;
          this.#left -= n;
          if (this.#left > 0) break;
          if (this.#state === State.Length) this.#finish();
          else if (this.#state === State.ChunkData) {
            this.#state = State.ChunkEnd;
            this.#left = 2;
          } else this.#state = State.ChunkSize;
          break;
        }
        case State.ChunkSize:
        case State.Trailer: {
          const nl = chunk.indexOf(10, at);
          const stop = nl === -1 ? chunk.length : nl + 1;
          this.out(chunk.subarray(at, stop), undefined);
          this.#line += chunk.toString('latin1', at, stop);
          at = stop;
          if (this.#line.length > 4096) throw new FramingError('chunk line too long');
          if (nl === -1) break;
          const line = this.#line.replace(/\r?\n$/, '');
          this.#line = '';
          if (this.#state === State.Trailer) {
            if (line === '') this.#finish();
            break;
          }
          const size = Number.parseInt(line.split(';')[0]!.trim(), 16);
          if (!Number.isFinite(size) || size < 0) throw new FramingError('bad chunk size');
          if (size === 0) this.#state = State.Trailer;
          else {
            this.#state = State.ChunkData;
            this.#left = size;
          }
          break;
        }
        case State.UntilClose:
          this.out(chunk.subarray(at), undefined);
          return chunk.length;
      }
    }
    return at;
  }

  #finish(): void {
    this.done = true;
    this.#state = State.Done;
  }

  #begin(headBytes: Buffer): void {
    const lines = headBytes.toString('latin1', 0, headBytes.length - 4).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1] ?? Number.NaN);
    if (!Number.isInteger(status)) throw new FramingError('bad status line');
    let length = -1;
    let chunked = false;
    let coded = false;
    let close = false;
    let keepAliveAsked = false;
    let keepAlive: string | undefined;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0) throw new FramingError('bad header line');
      const name = line.slice(0, colon).toLowerCase();
      const value = line
        .slice(colon + 1)
        .trim()
        .toLowerCase();
      if (name === 'content-length') length = Number(value);
      else if (name === 'transfer-encoding') {
        coded = true;
        chunked = value.split(',').pop()!.trim() === 'chunked';
      } else if (name === 'connection') {
        if (value.split(',').some((t) => t.trim() === 'close')) close = true;
        else if (value === 'keep-alive') keepAliveAsked = true;
      } else if (name === 'keep-alive') keepAlive = value;
    }
    if (status >= 100 && status < 200 && status !== 101) {
      // An interim answer: passed on, and the final one follows.
      this.out(headBytes, undefined);
      return;
    }
    const head: ResponseHead = {
      status,
      lines: lines.slice(1),
      close,
      keepAlive: keepAliveAsked && !close ? keepAlive : undefined,
    };
    this.head = head;
    if (this.headRequest || status === 204 || status === 304) this.#finish();
    else if (coded) {
      if (chunked) this.#state = State.ChunkSize;
      else this.#untilClose();
    } else if (length >= 0 && Number.isSafeInteger(length)) {
      this.#left = length;
      if (length === 0) this.#finish();
      else this.#state = State.Length;
    } else this.#untilClose();
    this.out(headBytes, head);
  }

  #untilClose(): void {
    this.untilClose = true;
    this.#state = State.UntilClose;
  }
}
