import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A shared test server that a global setup offers to the test files of its run. */
export interface OnDemand {
  /** Starts answering on a free loopback port; answers the URL a test file asks (shared-servers.ts). */
  listen(): Promise<string>;
  /** Stops answering, and stops the server if a test file had it started. */
  close(): Promise<void>;
}

/**
 * Offers a server that starts on the first request and is shared by every later one: `start` runs at
 * most once, and `address` gives what the test files connect to. A global setup cannot see which test
 * files a run holds, and most int test files never use the MongoDB-wire server or Kafka, so each JVM
 * starts only when the first test file that needs it asks, not with every run. A failed start answers
 * its error to every file that asks, so each of them fails saying why.
 */
export function onDemand<T extends { stop(): Promise<void> }>(
  start: () => Promise<T>,
  address: (server: T) => string,
): OnDemand {
  let started: Promise<T> | undefined;
  const http = createServer((_request, response) => {
    started ??= start();
    started.then(
      (server) => response.writeHead(200, { 'content-type': 'text/plain' }).end(address(server)),
      (error: unknown) =>
        response
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(error instanceof Error ? error.message : String(error)),
    );
  });
  return {
    async listen() {
      http.listen(0, '127.0.0.1');
      await once(http, 'listening');
      return `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
    },
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      const server = await started?.catch(() => undefined);
      await server?.stop();
    },
  };
}
