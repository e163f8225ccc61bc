import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';

// A raw HTTP client for tests of the public port: what curl and browsers send, byte for byte, including what
// fetch will not (pipelined requests, heads and bodies in pieces, malformed requests).

/** Sends `parts` (one write each, `gapMs` apart) and collects what comes back until close or `ms`. */
export function exchange(port: number, parts: readonly string[], ms = 3000, gapMs = 30): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (c) => {
      got += c.toString('latin1');
    });
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    let i = 0;
    const next = () => {
      if (i >= parts.length) return;
      socket.write(parts[i++]!);
      setTimeout(next, gapMs);
    };
    socket.on('connect', next);
  });
}

/** Writes `text` in one write, returns what came back before the server closed (or `ms` passed). */
export const raw = (port: number, text: string, ms = 5000): Promise<string> => exchange(port, [text], ms);

/** Starts `app` on a free loopback port and gives the port. */
export async function listenOnFreePort(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return typeof address === 'object' && address ? address.port : 0;
}
