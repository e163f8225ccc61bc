import { loadConfig, loggerOptions, serve } from '@eggmesh/service-kit';
import { dataFiles, openPrimaryStore, ProjectionReader, SqliteReadStore } from '@eggmesh/store-sqlite';
import { buildApp } from './app.js';

const config = loadConfig();
const files = dataFiles(config.dataDir);
const primary = openPrimaryStore({ file: files.primary, synchronous: config.sqliteSync });
const reader = new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir));
const app = await buildApp({ config, primary, reader, logger: loggerOptions(config, 'write-api') });
await serve(app, { port: config.ports.write, config, onClose: () => reader.close() });
app.log.info({ dataDir: config.dataDir, sync: config.sqliteSync }, 'write-api ready');
if (config.auth.mode === 'none') {
  app.log.warn('writes are unauthenticated (EGGMESH_AUTH=none): anyone who can reach this port can write');
} else {
  app.log.info(
    { auth: 'jwt', reads: config.auth.reads ? 'need eggmesh:read' : 'open' },
    'writes need a bearer token with eggmesh:write or eggmesh:write:<entity>',
  );
}
