import { createServer } from 'node:net';

/**
 * A TCP port no one listens on right now on 127.0.0.1 (the kernel's pick). The one copy the test
 * servers (Kafka, schemathesis) and the test suites share.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port')),
      );
    });
  });
}
