import { readFileSync } from 'node:fs';

/**
 * What `GET /` answers: a small page that says what this base URL serves and links to the rest.
 * Static, built once.
 */
let page: string | undefined;

export function landingPage(): string {
  page ??= `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>eggmesh</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}</style>
</head>
<body>
<h1>eggmesh</h1>
<p>The egg economy: REST on <code>/&lt;entity&gt;/api</code> (writes go to the write-api),
GraphQL on <code>/&lt;entity&gt;/graph</code> and <code>/graphql</code>.</p>
<ul>
<li><a href="/dashboard/">National dashboard</a>: the egg economy at a glance, updating live</li>
<li><a href="/homestead/">Homestead</a>: log your hens' eggs from a phone, offline too</li>
<li><a href="/corporate/">Corporate portal</a>: farm KPIs, tables, manual entry and CSV upload</li>
<li><a href="/graphiql">GraphiQL</a>: explore the unified <code>/graphql</code> schema</li>
<li><a href="/docs">REST reference</a> (OpenAPI: <a href="/openapi.json">/openapi.json</a>)</li>
<li><a href="/api.md">API guide</a> (<code>docs/api.md</code>: endpoints, errors, limits)</li>
<li><a href="/health">/health</a> · <a href="/metrics">/metrics</a></li>
</ul>
</body>
</html>
`;
  return page;
}

/** docs/api.md of the checkout the read-api runs from (services/read-api/dist/http → docs/), read once. */
let apiGuide: string | null | undefined;

export function apiGuideText(): string | null {
  if (apiGuide === undefined) {
    try {
      apiGuide = readFileSync(new URL('../../../../docs/api.md', import.meta.url), 'utf8');
    } catch {
      apiGuide = null;
    }
  }
  return apiGuide;
}
