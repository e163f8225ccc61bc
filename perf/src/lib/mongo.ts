import { join } from 'node:path';
import { openMongoPrimaryStore } from '@eggmesh/store-mongodb';
import { openPrimaryStore } from '@eggmesh/store-sqlite';
import { type RunningServer, serverName, start } from '../../../infra/mongodb/server.mjs';

/** What a bench run on the MongoDB tier ran against; the report prints it. */
export interface StoreFigures {
  readonly kind: 'sqlite' | 'mongodb';
  /** The server behind the MongoDB adapter. */
  readonly server?: string;
  readonly note?: string;
  /** Loading the dataset's log into it. */
  readonly importSeconds?: number;
  readonly importedEntries?: number;
}

export const mongoNote =
  'figures from mongo-java-server (a MongoDB-wire test server in Java, in memory, no transactions, non-unique indexes ignored), not from MongoDB';

/**
 * Starts a MongoDB-wire test server (in memory, oplog on like `start:scaled`) and loads the dataset's
 * log (the SQLite primary of `dataDir`) into database `dbName`, versions and current documents
 * included; the projector then projects it from position 0 like on SQLite.
 */
export async function startMongoTier(
  dataDir: string,
  dbName: string,
  log: (message: string) => void,
): Promise<{ server: RunningServer; figures: StoreFigures }> {
  const server = await start({ oplog: true });
  log(
    `mongodb: ${serverName} at ${server.uri} (started in ${Math.round(server.startMs)} ms); loading the dataset`,
  );
  const started = performance.now();
  const source = openPrimaryStore({ file: join(dataDir, 'primary.db'), readonly: true });
  const target = await openMongoPrimaryStore({ uri: server.uri, dbName });
  let position = 0;
  try {
    for (;;) {
      const entries = await source.log.read(position, 2000);
      if (entries.length === 0) break;
      await target.importLog(entries);
      position = entries[entries.length - 1]!.position;
    }
  } finally {
    await target.close();
    await source.close();
  }
  const importSeconds = (performance.now() - started) / 1000;
  log(`mongodb: loaded ${position.toLocaleString('en-US')} log entries in ${importSeconds.toFixed(1)} s`);
  return {
    server,
    figures: {
      kind: 'mongodb',
      server: serverName,
      note: mongoNote,
      importSeconds,
      importedEntries: position,
    },
  };
}
