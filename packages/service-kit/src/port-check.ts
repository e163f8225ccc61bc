import { connect, createServer } from 'node:net';

/** Where to knock for a listener bound to `host`: a wildcard address is reached on loopback. */
const reachable = (host: string) => (host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host);

/**
 * Resolves true once something listening accepts a TCP connection on `host`:`port`. A connection
 * that reached itself (Linux lets a socket whose ephemeral port is the one it dials connect to itself
 * when nothing listens there) is no listener.
 */
export function acceptsConnections(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: reachable(host), port });
    socket.once('connect', () => {
      const self = socket.localPort === socket.remotePort && socket.localAddress === socket.remoteAddress;
      socket.destroy();
      resolve(!self);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Who holds `host`:`port`: nobody (it can be bound), a `listener` (another server: a restart cannot
 * help), or only a `connection`: a socket that is not listening, such as an outgoing connection that
 * got the port as its ephemeral port, which goes away when that connection closes.
 */
export function portHolder(port: number, host: string): Promise<'none' | 'listener' | 'connection'> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE') {
        reject(error);
        return;
      }
      acceptsConnections(port, host).then(
        (listening) => resolve(listening ? 'listener' : 'connection'),
        reject,
      );
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve('none')));
  });
}
