import type { Server } from 'node:http';
import type { Config } from './config.js';

export interface LimitsLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/**
 * Applies the client limits of `config.http` to a Node HTTP server before it listens: a client gets
 * `headersTimeoutMs` for its headers and `requestTimeoutMs` for the whole request (else 408 and the
 * connection closes), a socket silent for `requestTimeoutMs` mid-request closes, an idle keep-alive
 * connection closes after `keepAliveTimeoutMs`, and connections beyond `maxConnections` are closed on
 * accept (logged at most every 10 s) while the open ones keep being served.
 */
export function applyHttpLimits(server: Server, http: Config['http'], log: LimitsLogger): void {
  server.headersTimeout = http.headersTimeoutMs;
  server.requestTimeout = http.requestTimeoutMs;
  server.keepAliveTimeout = http.keepAliveTimeoutMs;
  server.setTimeout(http.requestTimeoutMs);
  server.maxConnections = http.maxConnections;
  // Node enforces the two request timeouts on a timer (30 s by default, read when the server starts
  // listening), so a 10 s limit could otherwise stretch to 40 s. A check a second costs nothing.
  Object.assign(server, {
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(http.headersTimeoutMs / 4))),
  });
  let dropped = 0;
  let loggedAt = 0;
  server.on('drop', () => {
    dropped += 1;
    const now = Date.now();
    if (now - loggedAt < 10_000) return;
    log.warn(
      { dropped, maxConnections: http.maxConnections },
      'connection limit reached: closing new connections (EGGMESH_HTTP_MAX_CONNECTIONS)',
    );
    loggedAt = now;
    dropped = 0;
  });
}
