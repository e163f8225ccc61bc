import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectLog, loadConfig, serve } from '@eggmesh/service-kit';
import { Connecting, ConnectingReadStore, openMongoReadStore } from '@eggmesh/store-mongodb';
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
async function openWhenReady(dataDir: string): Promise<SqliteReadStore> {
  const { primary } = dataFiles(dataDir);
  let told = '';
  for (;;) {
    let reason = `waiting for ${primary}: start the write-api first`;
    if (existsSync(primary)) {
      try {
        return openReadStore(dataDir);
      } catch (error) {
        reason = `waiting for ${primary} to be initialised by the write-api (${(error as Error).message})`;
      }
    }
    if (reason !== told) bootLog(30, reason);
    told = reason;
    await sleep(RETRY_MS);
  }
}

// The composition root: the storage adapters EGGMESH_STORE names are built here and nowhere else.
const config = loadConfig();
/** MongoDB: reads from secondaries when there are any; connects in the background (/ready 503 until then). */
const mongoStore = () => {
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
const store = config.store === 'mongodb' ? mongoStore() : await openWhenReady(config.dataDir);
const app = buildApp({ config, store });
await serve(app, { port: config.ports.read, config, onClose: () => store.close() });
