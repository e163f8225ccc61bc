import {
  commonServiceEnv,
  connectLog,
  loadConfig,
  loggerOptions,
  parseCommandLine,
  serve,
} from '@eggmesh/service-kit';
import type { EntityReader, PrimaryStore } from '@eggmesh/store';
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

// The composition root: the storage adapters EGGMESH_STORE names are built here and nowhere else.
const config = loadConfig();

function sqliteStores(): { primary: PrimaryStore; reader: EntityReader & { close(): Promise<void> } } {
  const files = dataFiles(config.dataDir);
  const primary = openPrimaryStore({ file: files.primary, synchronous: config.sqliteSync });
  return { primary, reader: new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir)) };
}

/**
 * MongoDB: connects in the background, so the service answers (/ready 503, writes 503) until it can.
 * The adapter (and the mongodb driver) is loaded only here, never on SQLite.
 */
async function mongoStores(): Promise<{
  primary: PrimaryStore;
  reader: EntityReader & { close(): Promise<void> };
}> {
  const {
    Connecting,
    ConnectingPrimaryStore,
    ConnectingReadStore,
    openMongoPrimaryStore,
    openMongoReadStore,
  } = await import('@eggmesh/store-mongodb');
  const { uri, dbName, writeConcern } = config.mongodb;
  const log = connectLog('write-api', `MongoDB at ${uri}`);
  const primary = new ConnectingPrimaryStore(
    new Connecting(
      () => openMongoPrimaryStore({ uri, dbName, writeConcern, serverSelectionTimeoutMS: 5000 }),
      log,
    ),
  );
  // The write-api's REST reads go to the primary, so a client reads its own writes at once.
  const reader = new ConnectingReadStore(
    new Connecting(() =>
      openMongoReadStore({ uri, dbName, readPreference: 'primary', serverSelectionTimeoutMS: 5000 }),
    ),
  );
  return { primary, reader };
}

const { primary, reader } = config.store === 'mongodb' ? await mongoStores() : sqliteStores();
const app = await buildApp({ config, primary, reader, logger: loggerOptions(config, 'write-api') });
await serve(app, {
  port: config.ports.write,
  config,
  onClose: async () => {
    await reader.close();
    await primary.close();
  },
});
app.log.info(
  config.store === 'mongodb'
    ? { store: 'mongodb', uri: config.mongodb.uri, db: config.mongodb.dbName }
    : { store: 'sqlite', dataDir: config.dataDir, sync: config.sqliteSync },
  'write-api ready',
);
if (config.auth.mode === 'none') {
  app.log.warn('writes are unauthenticated (EGGMESH_AUTH=none): anyone who can reach this port can write');
} else {
  app.log.info(
    { auth: 'jwt', reads: config.auth.reads ? 'need eggmesh:read' : 'open' },
    'writes need a bearer token with eggmesh:write or eggmesh:write:<entity>',
  );
}
