import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import { describe, expect, it } from 'vitest';
import { toStoreError } from '../src/errors.js';

/** A real connection whose peer has closed it, as a pooled connection to a killed server is. */
async function endedByPeer(): Promise<Socket> {
  const server = createServer((peer) => peer.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const socket = connect(address.port, '127.0.0.1');
  socket.resume();
  await once(socket, 'end');
  server.close();
  return socket;
}

describe('socket failures the mongodb driver lets through as plain errors', () => {
  it('a write on a connection the server closed is STORE_UNAVAILABLE, not an internal error', async () => {
    const socket = await endedByPeer();
    // What the driver's writeCommand does: write, then wait for 'drain' or 'error'.
    expect(socket.write(Buffer.from('hello'))).toBe(false);
    const [error] = await once(socket, 'error');
    expect(error).toBeInstanceOf(Error);
    expect(error.constructor.name).not.toMatch(/^Mongo/);
    expect(isStoreError(toStoreError(error), storeErrorCodes.UNAVAILABLE)).toBe(true);
  });
});
