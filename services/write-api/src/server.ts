import { commonServiceEnv, loadConfig, loggerOptions, parseCommandLine, serve } from '@eggmesh/service-kit';
import { dataFiles, openPrimaryStore, ProjectionReader, SqliteReadStore } from '@eggmesh/store-sqlite';
import { buildApp } from './app.js';

parseCommandLine({
  command: 'node services/write-api/dist/server.js',
  summary:
    'The write side: REST (Fastify) over the primary store. Every change appends a version and an\nevent-log entry in one transaction. `pnpm start` runs it under the supervisor.',
  env: [
    ...commonServiceEnv,
    'WRITE_API_PORT',
    'EGGMESH_LOG_REQUESTS',
    'EGGMESH_CORS_ORIGIN',
    'EGGMESH_BODY_LIMIT_BYTES',
    'EGGMESH_BULK_MAX_ITEMS',
    'EGGMESH_SQLITE_SYNC',
    'EGGMESH_LIST_DEFAULT_LIMIT',
    'EGGMESH_LIST_MAX_LIMIT',
    'EGGMESH_MAX_FUTURE_MS',
  ],
});
const config = loadConfig();
const files = dataFiles(config.dataDir);
const primary = openPrimaryStore({ file: files.primary, synchronous: config.sqliteSync });
const reader = new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir));
const app = await buildApp({ config, primary, reader, logger: loggerOptions(config, 'write-api') });
await serve(app, { port: config.ports.write, config, onClose: () => reader.close() });
app.log.info({ dataDir: config.dataDir, sync: config.sqliteSync }, 'write-api ready');
