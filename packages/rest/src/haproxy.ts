import { type Config, EggmeshError } from '@eggmesh/service-kit';
import { pathPattern, READ_METHODS, writeRoutes } from './route-table.js';

/**
 * HAProxy in front of eggmesh (production, compose): its configuration written from the one route table
 * (route-table.ts), so it routes every request as the read-api's own forwarding does:
 * the write routes to the write-api, everything else (GraphQL, the REST reads, the landing page,
 * `/health`, `/metrics`) to the read-api replicas. Its own answers (413, 502, 503, 504) carry
 * eggmesh's JSON error bodies from the one error table and never an address.
 */
export interface HaproxyOptions {
  /** Where HAProxy listens, `host:port` (`*:5088` in a container). */
  readonly bind: string;
  /** The write-api, `host:port` (one: it is the only writer). */
  readonly write: string;
  /**
   * The read-api replicas, `host:port` each, or one DNS name with a record per replica (compose): requests
   * are balanced over those that pass their `/health` check.
   */
  readonly read: readonly string[] | DnsReplicas;
  /** Idle time a client's keep-alive connection is kept (`EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS`). */
  readonly keepAliveTimeoutMs: number;
  /** Time for a request's head (`EGGMESH_HTTP_HEADERS_TIMEOUT_MS`). */
  readonly headersTimeoutMs: number;
  /** Time for a whole request and for a service's answer (`EGGMESH_HTTP_REQUEST_TIMEOUT_MS`). */
  readonly requestTimeoutMs: number;
  /** Larger declared bodies get 413 (`EGGMESH_BODY_LIMIT_BYTES`). */
  readonly bodyLimitBytes: number;
  /** Client connections at once (`EGGMESH_HTTP_MAX_CONNECTIONS`). */
  readonly maxConnections: number;
  /** How often each server's `/health` is checked. */
  readonly checkIntervalMs: number;
}

/** Replicas found by DNS (compose's `deploy.replicas`): up to `replicas` servers behind `name`. */
export interface DnsReplicas {
  /** `host:port`, the host a name with one address per replica. */
  readonly name: string;
  readonly replicas: number;
  /** The DNS server to ask, `ip:port` (Docker's is 127.0.0.11:53). */
  readonly nameserver: string;
}

const SERVICE = { write: 'write-api', read: 'read-api' } as const;

/** One `http-error` line: eggmesh's JSON body for a status HAProxy answers itself. */
function errorLine(status: number, error: EggmeshError): string {
  const body = JSON.stringify(error.toBody());
  // HAProxy takes a single-quoted word as is; none of the error table's messages has a quote.
  if (body.includes("'")) throw new Error(`an HAProxy error body cannot contain a quote: ${body}`);
  return `  http-error status ${status} content-type "application/json; charset=utf-8" string '${body}'`;
}

function backend(
  side: 'write' | 'read',
  servers: readonly string[] | DnsReplicas,
  o: HaproxyOptions,
): string[] {
  const service = SERVICE[side];
  const down = new EggmeshError('EGGMESH_UPSTREAM_UNAVAILABLE', [service]);
  // Names the compose network's DNS resolves (and resolves again as containers come and go).
  const resolve = Array.isArray(o.read) ? '' : ' resolvers dns init-addr none';
  const check = `check inter ${o.checkIntervalMs}ms${resolve}`;
  return [
    `backend ${side}`,
    '  balance leastconn',
    '  option httpchk',
    '  http-check send meth GET uri /health',
    ...(Array.isArray(servers)
      ? servers.map((server, i) => `  server ${service}-${i + 1} ${server} ${check}`)
      : [
          `  server-template ${service}- ${(servers as DnsReplicas).replicas} ${(servers as DnsReplicas).name} ${check}`,
        ]),
    errorLine(502, down),
    // No server passes its check (the service is down): the same body, 503.
    errorLine(503, down),
    errorLine(504, new EggmeshError('EGGMESH_UPSTREAM_TIMEOUT', [service])),
  ];
}

/** The HAProxy configuration (HAProxy 2.4 or newer). */
export function haproxyConfig(o: HaproxyOptions): string {
  const rules = writeRoutes.flatMap((route, i) => [
    `  acl write_path${i} path_reg ${pathPattern(route.url)}`,
    route.methods === 'all'
      ? `  use_backend write if write_path${i}`
      : `  use_backend write if write_path${i} !read_method`,
  ]);
  const dns = Array.isArray(o.read) ? undefined : (o.read as DnsReplicas);
  return [
    '# Written by `pnpm haproxy-config` (packages/rest/src/haproxy.ts) from the route table in',
    '# packages/rest/src/route-table.ts: edit those, not this file.',
    'global',
    `  maxconn ${o.maxConnections}`,
    '',
    ...(dns ? ['resolvers dns', `  nameserver dns ${dns.nameserver}`, '  hold valid 10s', ''] : []),
    'defaults',
    '  mode http',
    '  option http-keep-alive',
    '  option forwardfor',
    '  timeout connect 5s',
    `  timeout http-request ${o.headersTimeoutMs}ms`,
    `  timeout client ${o.requestTimeoutMs}ms`,
    `  timeout server ${o.requestTimeoutMs}ms`,
    `  timeout http-keep-alive ${o.keepAliveTimeoutMs}ms`,
    // A WebSocket (GraphQL subscriptions on /graphql) is a tunnel once upgraded: it stays open while
    // the read-api pings it every 15 s, and a silent one closes after this.
    '  timeout tunnel 1h',
    errorLine(400, new EggmeshError('EGGMESH_BAD_REQUEST')),
    errorLine(413, new EggmeshError('EGGMESH_BODY_TOO_LARGE', [o.bodyLimitBytes])),
    errorLine(500, new EggmeshError('EGGMESH_INTERNAL')),
    '',
    'frontend eggmesh',
    `  bind ${o.bind}`,
    `  http-request deny deny_status 413 if { req.hdr_val(content-length) gt ${o.bodyLimitBytes} }`,
    `  acl read_method method ${READ_METHODS.join(' ')}`,
    ...rules,
    '  default_backend read',
    '',
    ...backend('write', [o.write], o),
    '',
    ...backend('read', o.read, o),
    '',
  ].join('\n');
}

/**
 * The configuration compose runs (infra/compose/haproxy.cfg): HAProxy on 5088 in its container, the
 * write-api and the read-api replicas by their service names on the compose network, the limits of
 * `config` (the documented defaults unless the environment sets them).
 */
export function composeHaproxyConfig(config: Pick<Config, 'ports' | 'bodyLimitBytes' | 'http'>): string {
  return haproxyConfig({
    bind: `*:${config.ports.read}`,
    write: `write-api:${config.ports.write}`,
    read: { name: `read-api:${config.ports.read}`, replicas: 2, nameserver: '127.0.0.11:53' },
    keepAliveTimeoutMs: config.http.keepAliveTimeoutMs,
    headersTimeoutMs: config.http.headersTimeoutMs,
    requestTimeoutMs: config.http.requestTimeoutMs,
    bodyLimitBytes: config.bodyLimitBytes,
    maxConnections: config.http.maxConnections,
    checkIntervalMs: 5000,
  });
}
