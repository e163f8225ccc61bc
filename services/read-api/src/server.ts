import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { commonServiceEnv, connectLog, loadConfig, parseCommandLine, serve } from '@eggmesh/service-kit';
import { dataFiles, openReadStore, type SqliteReadStore } from '@eggmesh/store-sqlite';
import { buildApp } from './app.js';

const RETRY_MS = 500;

/** One JSON line in the shape of the service's pino logs, for before the app (and its logger) exists. */
const bootLog = (level: number, msg: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(
    `${JSON.stringify({ level, time: Date.now(), service: 'read-api', msg, ...extra })}\n`,
  );

/**
 * Opens the data directory read-only. The write-api creates the primary file; until it has (file and
 * tables), say so once and retry every 500 ms.
 */
async function openWhenReady(dataDir: string, memoRows: number): Promise<SqliteReadStore> {
  const { primary } = dataFiles(dataDir);
  let told = '';
  for (;;) {
    let reason = `waiting for ${primary}: start the write-api first`;
    if (existsSync(primary)) {
      try {
        return openReadStore(dataDir, { memoRows });
      } catch (error) {
        reason = `waiting for ${primary} to be initialised by the write-api (${(error as Error).message})`;
      }
    }
    if (reason !== told) bootLog(30, reason);
    told = reason;
    await sleep(RETRY_MS);
  }
}

parseCommandLine({
  command: 'node services/read-api/dist/server.js',
  summary:
    'The public port: GraphQL (Mercurius + graphql-jit) and the REST reads over a read-only replica of the\nprimary and the projections, the landing page; REST writes, /docs and /openapi.json forwarded to the\nwrite-api. On SQLite it waits for the write-api to create the data files. `pnpm start` runs it under the\nsupervisor.',
  env: [
    ...commonServiceEnv,
    'READ_API_PORT',
    'WRITE_API_PORT',
    'EGGMESH_WRITE_API_URL',
    'EGGMESH_LOG_REQUESTS',
    'EGGMESH_CORS_ORIGIN',
    'EGGMESH_BODY_LIMIT_BYTES',
    'EGGMESH_LIST_DEFAULT_LIMIT',
    'EGGMESH_LIST_MAX_LIMIT',
    'EGGMESH_MIN_POSITION_WAIT_MS',
    'EGGMESH_READ_MEMO_ROWS',
    'EGGMESH_GRAPHQL_MAX_DEPTH',
    'EGGMESH_GRAPHQL_MAX_COST',
    'EGGMESH_GRAPHQL_MAX_FIELDS',
    'EGGMESH_GRAPHQL_MAX_DOCUMENT_BYTES',
    'EGGMESH_GRAPHQL_MAX_TOKENS',
    'EGGMESH_GRAPHQL_MAX_ROWS',
    'EGGMESH_GRAPHQL_MAX_RESPONSE_BYTES',
  ],
});
// The composition root: the storage adapters EGGMESH_STORE names are built here and nowhere else.
const config = loadConfig();
/**
 * MongoDB: reads from secondaries when there are any; connects in the background (/ready 503 until
 * then). The adapter (and the mongodb driver) is loaded only here, never on SQLite.
 */
const mongoStore = async () => {
  const { Connecting, ConnectingReadStore, openMongoReadStore } = await import('@eggmesh/store-mongodb');
  const { uri, dbName } = config.mongodb;
  return new ConnectingReadStore(
    new Connecting(
      () =>
        openMongoReadStore({
          uri,
          dbName,
          readPreference: 'secondaryPreferred',
          serverSelectionTimeoutMS: 5000,
        }),
      connectLog('read-api', `MongoDB at ${uri}`),
    ),
  );
};
/**
 * MongoDB: the REST reads read the primary, as the write-api's did, so a client reads its own REST
 * writes at once; GraphQL reads the secondaries and waits with `x-min-position`.
 */
const mongoRestReader = async () => {
  const { Connecting, ConnectingReadStore, openMongoReadStore } = await import('@eggmesh/store-mongodb');
  const { uri, dbName } = config.mongodb;
  return new ConnectingReadStore(
    new Connecting(() =>
      openMongoReadStore({ uri, dbName, readPreference: 'primary', serverSelectionTimeoutMS: 5000 }),
    ),
  );
};
const store =
  config.store === 'mongodb' ? await mongoStore() : await openWhenReady(config.dataDir, config.readMemoRows);
const restReader = config.store === 'mongodb' ? await mongoRestReader() : undefined;
const app = buildApp({ config, store, ...(restReader ? { restReader } : {}) });
await serve(app, {
  port: config.ports.read,
  config,
  onClose: async () => {
    await restReader?.close();
    await store.close();
  },
});
