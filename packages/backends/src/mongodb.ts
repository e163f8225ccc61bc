import { connectLog } from '@eggmesh/service-kit';
import {
  Connecting,
  ConnectingPrimaryStore,
  ConnectingProjectionStore,
  ConnectingReadStore,
  connectingMongoEventLog,
  openMongoEventLog,
  openMongoPrimaryStore,
  openMongoProjectionStore,
  openMongoReadStore,
} from '@eggmesh/store-mongodb';
import type { Backend, BackendConfig } from './types.js';

const SERVER_SELECTION_MS = 5000;

/**
 * The scaled tier: one MongoDB database for the log and the entities, and the projections in the same
 * one or in their own (EGGMESH_MONGODB_PROJECTIONS_URI: another database, on the same deployment or
 * another). Every side connects in the background, so a service answers (`/ready` 503, writes 503)
 * until MongoDB does, and says why in its log.
 */
export function mongodbBackend(config: BackendConfig, service: string): Backend {
  const { uri, dbName, projections } = config.mongodb;
  const apart = projections.uri !== uri || projections.dbName !== dbName;
  const projectionsAt = apart ? { projections: { uri: projections.uri, db: projections.dbName } } : {};
  const log = () => connectLog(service, `MongoDB at ${uri}`);
  /** A reader connecting in the background; only the one a side waits on first logs its retries. */
  const reader = (readPreference: 'primary' | 'secondaryPreferred', logged = false) =>
    new ConnectingReadStore(
      new Connecting(
        () =>
          openMongoReadStore({
            uri,
            dbName,
            projections,
            readPreference,
            serverSelectionTimeoutMS: SERVER_SELECTION_MS,
          }),
        ...(logged ? [log()] : []),
      ),
    );
  return {
    name: 'mongodb',
    describe: () => ({ store: 'mongodb', uri, db: dbName, ...projectionsAt }),
    async openWriteSide() {
      const primary = new ConnectingPrimaryStore(
        new Connecting(
          () => openMongoPrimaryStore({ uri, dbName, serverSelectionTimeoutMS: SERVER_SELECTION_MS }),
          log(),
        ),
      );
      // The write-api's REST reads go to the primary, so a client reads its own writes at once.
      const primaryReader = reader('primary');
      return {
        primary,
        reader: primaryReader,
        async close() {
          await primaryReader.close();
          await primary.close();
        },
      };
    },
    async openReadSide() {
      // GraphQL reads the secondaries (and waits with x-min-position); REST reads read the primary, so
      // a client reads its own REST writes at once.
      const store = reader('secondaryPreferred', true);
      const restReader = reader('primary');
      return {
        store,
        restReader,
        // A GraphQL read whose x-min-position the secondaries have not applied in time reads the primary.
        primary: restReader,
        async close() {
          await restReader.close();
          await store.close();
        },
      };
    },
    async openPrimaryLog() {
      const events = connectingMongoEventLog({ uri, dbName }, log());
      return { log: events, problem: () => null, close: () => events.close() };
    },
    async openProjections() {
      // The projector's checkpoint and commit marker live with the projections they commit.
      const store = new ConnectingProjectionStore(
        new Connecting(() =>
          openMongoProjectionStore({
            uri: projections.uri,
            dbName: projections.dbName,
            serverSelectionTimeoutMS: SERVER_SELECTION_MS,
          }),
        ),
      );
      return {
        current: () => store,
        follow: () => undefined,
        promotions: () => 0,
        // Rebuilds on MongoDB happen in place (the checkpoint moves back): nothing to switch to.
        promoted: (_seen, timeoutMs, signal) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, timeoutMs);
            signal.addEventListener('abort', () => {
              clearTimeout(timer);
              resolve();
            });
          }),
        describe: () => ({ store: 'mongodb', uri: projections.uri, db: projections.dbName }),
        close: () => store.close(),
      };
    },
    async openRebuild() {
      // In place: the projection collections and the checkpoint are dropped, then the log is replayed. A
      // projector still running meanwhile conflicts on its next checkpoint and carries on from the rebuilt one.
      const events = await openMongoEventLog({ uri, dbName, serverSelectionTimeoutMS: 10_000 });
      const store = await openMongoProjectionStore({
        uri: projections.uri,
        dbName: projections.dbName,
        reset: true,
      });
      return {
        log: events,
        store,
        unboundedCache: false,
        promote: async () => ({ generation: null, previous: null, removed: [] }),
        async close() {
          await store.close();
          await events.close();
        },
      };
    },
  };
}
