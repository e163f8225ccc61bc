import { openBackend } from '@eggmesh/backends';
import { loadConfig, loggerOptions, openAccessWarnings, parseCommandLine, serve } from '@eggmesh/service-kit';
import { buildApp } from './app.js';

parseCommandLine({
  command: 'node services/write-api/dist/server.js',
  summary:
    'The write side: REST (Fastify) over the primary store. Every change appends a version and an\nevent-log entry in one transaction. `pnpm start` runs it under the supervisor.',
  config: 'write-api',
});

// The composition root: the adapters of the backend EGGMESH_STORE names are built here and nowhere else.
const config = loadConfig('write-api');
const backend = await openBackend(config, 'write-api');
const { primary, reader, close } = await backend.openWriteSide();
const app = await buildApp({ config, primary, reader, logger: loggerOptions(config, 'write-api') });
await serve(app, { port: config.ports.write, config, onClose: close });
app.log.info(backend.describe(), 'write-api ready');
for (const warning of openAccessWarnings(config)) app.log.warn(warning);
if (config.auth.mode === 'jwt') {
  app.log.info(
    { auth: 'jwt', reads: config.auth.reads ? 'need eggmesh:read' : 'open' },
    'writes need a bearer token with eggmesh:write or eggmesh:write:<entity>',
  );
}
