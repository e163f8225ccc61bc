import type { Socket } from 'node:net';
import { EggmeshError } from '@eggmesh/service-kit';
import type { FastifyInstance } from 'fastify';

/**
 * Requests one connection may have open at once. A client may pipeline (send requests without waiting
 * for the answers); node:http parses them as they come and stops reading only once the answers it has
 * written pile up. An answer that waits on another process (a forwarded write) has written nothing
 * yet, so a client pipelining faster than the write-api answers would queue requests in this process
 * without bound.
 */
const OPEN_PER_CONNECTION = 32;

/**
 * Bounds the requests each connection has open at once: past OPEN_PER_CONNECTION, the request is
 * answered 429 `EGGMESH_RATE_LIMITED` at once and the connection closed after it (node:http then
 * parses nothing more from it). Browsers and HTTP clients do not pipeline that deep.
 */
export function boundPipelining(app: FastifyInstance): void {
  const open = new WeakMap<Socket, number>();
  app.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket;
    const count = (open.get(socket) ?? 0) + 1;
    open.set(socket, count);
    reply.raw.once('close', () => open.set(socket, (open.get(socket) ?? 1) - 1));
    if (count <= OPEN_PER_CONNECTION) {
      done();
      return;
    }
    const error = new EggmeshError(
      'EGGMESH_RATE_LIMITED',
      [],
      {},
      `more than ${OPEN_PER_CONNECTION} requests at once on one connection; retry after 1 s`,
    );
    reply
      .header('retry-after', '1')
      .header('connection', 'close')
      .code(error.statusCode)
      .send(error.toBody());
  });
}
