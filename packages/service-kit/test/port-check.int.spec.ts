import { connect, createServer, type Server, type Socket } from 'node:net';
import { acceptsConnections, portHolder } from '@eggmesh/service-kit';
import { afterEach, describe, expect, it } from 'vitest';

const listening = (server: Server): Promise<number> =>
  new Promise((resolve) => {
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });

describe('the port check looks for a listener', () => {
  const opened: { close(): void }[] = [];
  afterEach(() => {
    for (const o of opened.splice(0)) o.close();
  });

  it('reports a port held only by an outgoing connection (its ephemeral port) as no listener, a server as one', async () => {
    const server = createServer((socket) => opened.push({ close: () => socket.destroy() }));
    const serverPort = await listening(server);
    opened.push({ close: () => server.close() });
    const client: Socket = await new Promise((resolve) => {
      const socket = connect({ port: serverPort, host: '127.0.0.1' }, () => resolve(socket));
    });
    opened.push({ close: () => client.destroy() });
    const held = client.localPort as number;
    // The port cannot be bound while the connection lives, but nothing listens on it.
    expect(await portHolder(held, '127.0.0.1')).toBe('connection');
    expect(await acceptsConnections(held)).toBe(false);
    expect(await portHolder(serverPort, '127.0.0.1')).toBe('listener');
    expect(await acceptsConnections(serverPort)).toBe(true);
  });
});
