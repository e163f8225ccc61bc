/** Which service answers a path: REST and its docs go to the write-api, GraphQL to the read-api. */
export type Upstream = 'write' | 'read';

const rules: readonly [RegExp, Upstream][] = [
  [/^\/[a-z_]+\/api(\/|$)/, 'write'],
  [/^\/[a-z_]+\/graph\/?$/, 'read'],
  [/^\/graphql\/?$/, 'read'],
  [/^\/graphiql(\/|$)/, 'read'],
  [/^\/docs(\/|$)/, 'write'],
  [/^\/openapi\.json$/, 'write'],
];

export function upstreamFor(path: string): Upstream | null {
  for (const [pattern, upstream] of rules) if (pattern.test(path)) return upstream;
  return null;
}
