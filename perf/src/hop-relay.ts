// The floor of a Node hop, for `node perf/dist/hop.js`: a relay that passes bytes between each client
// connection and a connection of its own to the target, both ways, reading nothing. It cannot route,
// time out or count, so it is no front door; it shows what one more Node process on the path costs
// before any of the edge's own work. Settings: HOP_RELAY_PORT (listen, 127.0.0.1), HOP_RELAY_TARGET_PORT.
import { connect, createServer } from 'node:net';

const port = Number(process.env.HOP_RELAY_PORT);
const targetPort = Number(process.env.HOP_RELAY_TARGET_PORT);
if (!Number.isInteger(port) || !Number.isInteger(targetPort)) {
  process.stderr.write('hop-relay: set HOP_RELAY_PORT and HOP_RELAY_TARGET_PORT\n');
  process.exit(2);
}

const server = createServer({ noDelay: true }, (client) => {
  const upstream = connect({ host: '127.0.0.1', port: targetPort, noDelay: true });
  client.on('data', (bytes) => upstream.write(bytes));
  upstream.on('data', (bytes) => client.write(bytes));
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  client.on('error', () => undefined);
  upstream.on('error', () => undefined);
});
server.listen(port, '127.0.0.1');
// Nothing to finish: the measurement is over when it is stopped.
process.on('SIGTERM', () => process.exit(0));
