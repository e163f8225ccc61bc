import { STATUS_CODES } from 'node:http';
import { EdgeError } from './errors.js';
import { SERVICE } from './proxy.js';
import { routeRules, type Upstream } from './routes.js';

/**
 * HAProxy as the front door (`EGGMESH_FRONT_DOOR=haproxy`): its configuration, derived from the edge's
 * route table, so the two front doors route every path alike. HAProxy sends `/<entity>/api…`, `/docs`
 * and `/openapi.json` to the write-api and the GraphQL paths to the read-api; everything else (the
 * landing page, `/health`, `/metrics`, unknown paths) to the Node edge behind it. Its own answers
 * (502, 504, 400, …) carry eggmesh's JSON error bodies from the one error table. Why it exists and
 * what it costs: docs/architecture.md (the front door) and perf/README.md (round 21).
 */
export interface HaproxyOptions {
  /** Where HAProxy listens (`EGGMESH_HOST`, `EDGE_PORT`). */
  readonly bind: { readonly host: string; readonly port: number };
  /** The services, as URLs (`http://host:port`, no path). */
  readonly upstreams: Readonly<Record<Upstream | 'edge', string>>;
  /** Idle time a client's keep-alive connection is kept (`EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS`). */
  readonly keepAliveTimeoutMs: number;
  /** Time for a request's head (`EGGMESH_HTTP_HEADERS_TIMEOUT_MS`). */
  readonly headersTimeoutMs: number;
  /** Time for a whole request and for a service's answer (`EGGMESH_HTTP_REQUEST_TIMEOUT_MS`). */
  readonly requestTimeoutMs: number;
  /** Larger declared bodies get 413 (`EGGMESH_BODY_LIMIT_BYTES`). */
  readonly bodyLimitBytes: number;
  /** Connections at once (`EGGMESH_HTTP_MAX_CONNECTIONS`). */
  readonly maxConnections: number;
  /** Time a stopping HAProxy gives its open connections (`EGGMESH_SHUTDOWN_TIMEOUT_MS`). */
  readonly shutdownTimeoutMs: number;
  /** The folder the error files are written to (`haproxyErrorFiles`). */
  readonly errorDir: string;
}

/** A raw HTTP answer for an error file: eggmesh's JSON body, closing the connection as HAProxy does. */
function answer(status: number, error: EdgeError | null): string {
  const body = error ? JSON.stringify(error.toBody()) : '';
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    (error ? 'content-type: application/json; charset=utf-8\r\n' : '') +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    'cache-control: no-store\r\n' +
    'connection: close\r\n\r\n' +
    body
  );
}

/** The error files HAProxy answers with, by file name. Per service: who did not answer. */
export function haproxyErrorFiles(bodyLimitBytes: number): Record<string, string> {
  const files: Record<string, string> = {
    '400.http': answer(400, new EdgeError('EGGMESH_BAD_REQUEST')),
    // As node:http answers a request that did not arrive in time: no body.
    '408.http': answer(408, null),
    '413.http': answer(
      413,
      new EdgeError(
        'EGGMESH_BODY_TOO_LARGE',
        `the body is larger than ${bodyLimitBytes} bytes (EGGMESH_BODY_LIMIT_BYTES)`,
      ),
    ),
    '500.http': answer(500, new EdgeError('EGGMESH_INTERNAL')),
  };
  for (const upstream of [...Object.keys(SERVICE), 'edge'] as (Upstream | 'edge')[]) {
    const service = upstream === 'edge' ? 'edge' : SERVICE[upstream];
    const down = new EdgeError('EGGMESH_UPSTREAM_UNAVAILABLE', `the ${service} did not answer`);
    files[`502-${upstream}.http`] = answer(502, down);
    // 503: HAProxy has no server to send to (it is down): the same body, as the Node edge gives it.
    files[`503-${upstream}.http`] = answer(503, down);
    files[`504-${upstream}.http`] = answer(
      504,
      new EdgeError('EGGMESH_UPSTREAM_TIMEOUT', `the ${service} did not answer in time`),
    );
  }
  return files;
}

/** `host:port` of a service URL. */
function address(url: string): string {
  const u = new URL(url);
  return `${u.hostname.replace(/^\[|\]$/g, '')}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
}

/** The HAProxy configuration for `options` (HAProxy 2.4 or newer). */
export function haproxyConfig(o: HaproxyOptions): string {
  const file = (name: string) => `${o.errorDir}/${name}`;
  const acls: string[] = [];
  const uses: string[] = [];
  routeRules.forEach(([pattern, upstream], i) => {
    // The route table's own expressions; HAProxy's are PCRE2, which reads them alike.
    acls.push(`  acl route${i} path_reg '${pattern.source.replaceAll("'", '')}'`);
    uses.push(`  use_backend ${upstream} if route${i}`);
  });
  const backend = (name: Upstream | 'edge', server: string) => [
    `backend ${name}`,
    `  server ${server} ${address(o.upstreams[name])}`,
    `  errorfile 502 ${file(`502-${name}.http`)}`,
    `  errorfile 503 ${file(`503-${name}.http`)}`,
    `  errorfile 504 ${file(`504-${name}.http`)}`,
  ];
  return [
    '# Written by eggmesh (services/edge/src/haproxy.ts) from the edge route table at each start.',
    'global',
    // One thread: on these 2-core machines the services need the other core (perf/README.md, round 21).
    '  nbthread 1',
    `  maxconn ${o.maxConnections}`,
    `  hard-stop-after ${o.shutdownTimeoutMs}ms`,
    '',
    'defaults',
    '  mode http',
    '  option http-keep-alive',
    '  option forwardfor',
    '  timeout connect 5s',
    `  timeout http-request ${o.headersTimeoutMs}ms`,
    `  timeout client ${o.requestTimeoutMs}ms`,
    `  timeout server ${o.requestTimeoutMs}ms`,
    `  timeout http-keep-alive ${o.keepAliveTimeoutMs}ms`,
    `  errorfile 400 ${file('400.http')}`,
    `  errorfile 408 ${file('408.http')}`,
    `  errorfile 413 ${file('413.http')}`,
    `  errorfile 500 ${file('500.http')}`,
    '',
    'frontend eggmesh',
    `  bind ${o.bind.host.includes(':') ? `[${o.bind.host}]` : o.bind.host}:${o.bind.port}`,
    `  http-request deny deny_status 413 if { req.hdr_val(content-length) gt ${o.bodyLimitBytes} }`,
    ...acls,
    ...uses,
    '  default_backend edge',
    '',
    ...backend('write', 'write-api'),
    '',
    ...backend('read', 'read-api'),
    '',
    ...backend('edge', 'edge'),
    '',
  ].join('\n');
}
