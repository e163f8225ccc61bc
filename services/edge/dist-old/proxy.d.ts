import { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { EdgeError } from './errors.js';
import type { Upstream } from './routes.js';
export interface ProxyLog {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}
export interface ProxyOptions {
  readonly upstreams: {
    readonly write: string;
    readonly read: string;
  };
  readonly bodyLimitBytes: number;
  /** A service that has not answered (or gone silent) this long gets a 504. */
  readonly timeoutMs: number;
  readonly log: () => ProxyLog;
  readonly logRequests: boolean;
  /** Headers the edge's own answers carry (CORS), from the request. */
  readonly ownHeaders: (request: IncomingMessage) => OutgoingHttpHeaders;
}
/** Writes one of the edge's own error answers, unless the response has started. */
export declare function writeError(
  response: ServerResponse,
  error: EdgeError,
  extraHeaders?: OutgoingHttpHeaders,
): void;
export declare const tooLarge: (limit: number) => EdgeError;
/** A path the edge cannot forward as is (a malformed percent-encoding): 400, as Fastify would. */
export declare function badPath(path: string): boolean;
/**
 * The edge's data path on bare `node:http`: one keep-alive agent per service, headers copied once
 * (hop-by-hop ones dropped), the request body piped through (counted against the body limit when it
 * has no length), and the answer written back in one write when it has a length. No framework, no
 * per-request allocation beyond the header object and the upstream request.
 */
export declare class Forwarder {
  #private;
  constructor(options: ProxyOptions);
  close(): void;
  handle(request: IncomingMessage, response: ServerResponse, upstream: Upstream): void;
}
//# sourceMappingURL=proxy.d.ts.map
