import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { httpErrors } from '../errors.js';

/** Where GraphiQL's files are served: the page loads nothing from another host. */
export const GRAPHIQL_ASSETS = '/graphiql/assets';

interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

const require = createRequire(import.meta.url);
/** A package's own directory (its `exports` do not list the browser bundles, its package.json always resolves). */
const packageDir = (name: string): string => dirname(require.resolve(`${name}/package.json`));
const ownAsset = (file: string): string => fileURLToPath(new URL(`../../assets/${file}`, import.meta.url));

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/**
 * The browser files of GraphiQL: graphiql's UMD bundle and stylesheet with the React 18 UMD builds it
 * runs on, all from this package's dependencies, and our bootstrap script (no inline script, so a
 * `script-src 'self'` policy allows the page).
 */
function loadAssets(): Map<string, Asset> {
  const files: Array<[string, string, string]> = [
    ['react.production.min.js', join(packageDir('react'), 'umd/react.production.min.js'), JS],
    ['react-dom.production.min.js', join(packageDir('react-dom'), 'umd/react-dom.production.min.js'), JS],
    ['graphiql.min.js', join(packageDir('graphiql'), 'graphiql.min.js'), JS],
    ['graphiql.min.css', join(packageDir('graphiql'), 'graphiql.min.css'), CSS],
    ['graphiql-init.js', ownAsset('graphiql-init.js'), JS],
    ['graphiql-page.css', ownAsset('graphiql-page.css'), CSS],
  ];
  return new Map(files.map(([name, path, type]) => [name, { type, body: readFileSync(path) }]));
}

const page = (endpoint: string): string => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>eggmesh GraphiQL</title>
    <link rel="stylesheet" href="${GRAPHIQL_ASSETS}/graphiql.min.css" />
    <link rel="stylesheet" href="${GRAPHIQL_ASSETS}/graphiql-page.css" />
  </head>
  <body>
    <div id="graphiql" data-endpoint="${endpoint}">Loading GraphiQL…</div>
    <script src="${GRAPHIQL_ASSETS}/react.production.min.js"></script>
    <script src="${GRAPHIQL_ASSETS}/react-dom.production.min.js"></script>
    <script src="${GRAPHIQL_ASSETS}/graphiql.min.js"></script>
    <script src="${GRAPHIQL_ASSETS}/graphiql-init.js"></script>
  </body>
</html>
`;

/**
 * `GET /graphiql`: GraphiQL on `endpoint`, every file served from `/graphiql/assets/` (read once, at
 * start). `?query=` opens the page with that query in the editor.
 */
export function registerGraphiql(app: FastifyInstance, endpoint: string): void {
  const assets = loadAssets();
  const html = page(endpoint);
  app.get('/graphiql', async (_request, reply) => reply.type('text/html; charset=utf-8').send(html));
  app.get<{ Params: { file: string } }>(`${GRAPHIQL_ASSETS}/:file`, async (request, reply) => {
    const asset = assets.get(request.params.file);
    if (!asset) {
      const { code, status } = httpErrors.ROUTE_NOT_FOUND;
      return reply.code(status).send({ error: `no GraphiQL file ${request.params.file}`, code });
    }
    // The files change only with the installed versions: a day in the browser's cache is safe.
    return reply.type(asset.type).header('cache-control', 'public, max-age=86400').send(asset.body);
  });
}
