const rules = [
  [/^\/[a-z_]+\/api(\/|$)/, 'write'],
  [/^\/[a-z_]+\/graph\/?$/, 'read'],
  [/^\/graphql\/?$/, 'read'],
  [/^\/graphiql(\/|$)/, 'read'],
  [/^\/docs(\/|$)/, 'write'],
  [/^\/openapi\.json$/, 'write'],
];
export function upstreamFor(path) {
  for (const [pattern, upstream] of rules) if (pattern.test(path)) return upstream;
  return null;
}
//# sourceMappingURL=routes.js.map
