/** Which service answers a path: REST and its docs go to the write-api, GraphQL to the read-api. */
export type Upstream = 'write' | 'read';

const restPath = /^\/[a-z_]+\/api(\/|$)/;

/** The route table: the Node edge and the HAProxy configuration (haproxy.ts) both read it. */
export const routeRules: readonly (readonly [RegExp, Upstream])[] = [
  [restPath, 'write'],
  [/^\/[a-z_]+\/graph\/?$/, 'read'],
  [/^\/graphql\/?$/, 'read'],
  [/^\/graphiql(\/|$)/, 'read'],
  [/^\/docs(\/|$)/, 'write'],
  [/^\/openapi\.json$/, 'write'],
];

export function upstreamFor(path: string): Upstream | null {
  for (const [pattern, upstream] of routeRules) if (pattern.test(path)) return upstream;
  return null;
}

/** A REST read (GET or HEAD of `/<entity>/api…`): a read process can answer it from its replica. */
export function isRestRead(method: string | undefined, path: string): boolean {
  return (method === 'GET' || method === 'HEAD') && restPath.test(path);
}
