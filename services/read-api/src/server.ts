import { openBackend } from '@eggmesh/backends';
import { bootLog, loadConfig, openAccessWarnings, parseCommandLine, serve } from '@eggmesh/service-kit';
import { buildApp } from './app.js';

parseCommandLine({
  command: 'node services/read-api/dist/server.js',
  summary:
    'The public port: GraphQL (Mercurius + graphql-jit) and the REST reads over a read-only replica of the\nprimary and the projections, the landing page; REST writes, /docs and /openapi.json forwarded to the\nwrite-api. On SQLite it waits for the write-api to create the data files. `pnpm start` runs it under the\nsupervisor.',
  config: 'read-api',
});
// The composition root: the adapters of the backend EGGMESH_STORE names are built here and nowhere else.
const config = loadConfig('read-api');
const backend = await openBackend(config, 'read-api', (message) => bootLog('read-api', 30, message));
const { store, restReader, primary, close } = await backend.openReadSide();
const app = buildApp({ config, store, restReader, ...(primary ? { primary } : {}) });
await serve(app, { port: config.ports.read, config, onClose: close });
// The public port forwards writes: it says who may write as the write-api does.
for (const warning of openAccessWarnings(config)) app.log.warn(warning);
