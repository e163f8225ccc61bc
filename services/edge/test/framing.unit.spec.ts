import { describe, expect, it } from 'vitest';
import { ResponseReader, readRequestHead } from '../src/framing.js';

const head = (...lines: string[]) => lines.join('\r\n');

describe('readRequestHead', () => {
  it('reads a plain head: length, close, X-Forwarded-For and Connection taken out, every header kept raw', () => {
    const got = readRequestHead(
      head(
        'POST /farm/api?x=1 HTTP/1.1',
        'Host: x',
        'Content-Length: 12',
        'X-Forwarded-For: 10.0.0.1',
        'Connection: keep-alive, close',
        'Origin:   https://o.example \t',
      ),
    );
    expect(got).toEqual({
      method: 'POST',
      target: '/farm/api?x=1',
      lines: ['Host: x', 'Content-Length: 12', 'Origin:   https://o.example \t'],
      // Every header, its value trimmed, for node:http when the edge answers the request itself.
      raw: [
        'Host',
        'x',
        'Content-Length',
        '12',
        'X-Forwarded-For',
        '10.0.0.1',
        'Connection',
        'keep-alive, close',
        'Origin',
        'https://o.example',
      ],
      length: 12,
      close: true,
      origin: 'https://o.example',
      forwardedFor: '10.0.0.1',
      asSent: false,
      plain: true,
    });
    // Without X-Forwarded-For and with no Connection but keep-alive, the head can go as it was sent.
    expect(readRequestHead(head('PUT /a HTTP/1.1', 'Host: x', 'Connection: keep-alive'))?.asSent).toBe(true);
    expect(readRequestHead(head('PUT /a HTTP/1.1', 'Host: x', 'Connection: close'))?.asSent).toBe(false);
  });

  it('leaves to node:http every head whose framing it does not read the same way', () => {
    for (const bad of [
      head('POST /a HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked'),
      head('POST /a HTTP/1.1', 'Host: x', 'Content-Length: 1', 'Content-Length: 1'),
      head('POST /a HTTP/1.1', 'Host: x', 'Content-Length: +1'),
      head('POST /a HTTP/1.1', 'Host: x', 'Expect: 100-continue'),
      head('GET /a HTTP/1.1', 'Host: x', 'Upgrade: websocket'),
      head('GET /a HTTP/1.1', 'Host: x', ' folded'),
      head('GET /a HTTP/1.1', 'Bad Header: y'),
      head('GET /a HTTP/1.1', 'X: a\u0001b'),
      head('GET /a HTTP/1.0', 'Host: x'),
      head('GET http://h/a HTTP/1.1', 'Host: x'),
      head('CONNECT /a HTTP/1.1', 'Host: x'),
      head('get /a HTTP/1.1', 'Host: x'),
    ])
      expect(readRequestHead(bad), bad).toBeUndefined();
  });

  it('frames but does not pass on heads a proxy must do more with', () => {
    expect(readRequestHead(head('GET /a HTTP/1.1', 'Host: x', 'Connection: close, X-Secret'))?.plain).toBe(
      false,
    );
    expect(readRequestHead(head('GET /a HTTP/1.1', 'Host: x', 'TE: trailers'))?.plain).toBe(false);
    expect(readRequestHead(head('GET /a HTTP/1.1'))?.plain).toBe(false);
    expect(readRequestHead(head('GET /a HTTP/1.1', 'Host: x', 'Host: y'))?.plain).toBe(false);
  });
});

/** Feeds `text` to a reader in pieces of `size` bytes; returns bytes used, what it wrote, and whether it ended. */
function follow(text: string, size: number, headRequest = false) {
  const written: Buffer[] = [];
  const reader = new ResponseReader(headRequest, (bytes) => written.push(Buffer.from(bytes)));
  const all = Buffer.from(text, 'latin1');
  let used = 0;
  for (let at = 0; at < all.length && !reader.done; at += size) {
    const piece = all.subarray(at, Math.min(all.length, at + size));
    used += reader.feed(piece);
  }
  return { used, out: Buffer.concat(written).toString('latin1'), done: reader.done, reader };
}

describe('ResponseReader', () => {
  const chunked =
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n3;ext=1\r\nefg\r\n0\r\nX-Trailer: t\r\n\r\n';
  const next = 'HTTP/1.1 204 No Content\r\n\r\n';

  it('finds the end of every framing, whatever the pieces it arrives in', () => {
    for (const size of [1, 2, 3, 7, 1000]) {
      const c = follow(chunked + next, size);
      expect(c.done, `chunked / ${size}`).toBe(true);
      expect(c.used, `chunked / ${size}`).toBe(chunked.length);
      expect(c.out).toBe(chunked);
      const sized = 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello';
      const l = follow(sized + next, size);
      expect(l.used, `length / ${size}`).toBe(sized.length);
      expect(l.done).toBe(true);
    }
  });

  it('reads no body after a HEAD, a 204 or a 304, and passes 1xx answers over', () => {
    const headAnswer = 'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n';
    expect(follow(headAnswer + next, 1000, true)).toMatchObject({ used: headAnswer.length, done: true });
    const notModified = 'HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n';
    expect(follow(notModified + next, 1000)).toMatchObject({ used: notModified.length, done: true });
    const interim = 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
    const got = follow(interim, 5);
    expect(got).toMatchObject({ used: interim.length, done: true });
    expect(got.reader.head?.status).toBe(200);
  });

  it('runs to the end of the connection without a length or chunks, and reads Connection: close', () => {
    const open = follow('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it', 4);
    expect(open.done).toBe(false);
    expect(open.reader.untilClose).toBe(true);
    expect(open.reader.head?.close).toBe(true);
    expect(open.out).toBe('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it');
  });

  it('refuses a malformed answer', () => {
    expect(() => follow('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 100)).toThrow(/chunk/);
    expect(() => follow('garbage\r\n\r\n', 100)).toThrow(/status/);
  });
});
