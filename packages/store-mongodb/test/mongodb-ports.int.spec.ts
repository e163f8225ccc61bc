import {
  runEventLogContract,
  runProjectionStoreContract,
  runReadStoreContract,
} from '@eggmesh/store/testing';
import {
  openMongoEventLog,
  openMongoPrimaryStore,
  openMongoProjectionStore,
  openMongoReadStore,
} from '@eggmesh/store-mongodb';
import { contractServers, dropDatabase, freshDbName } from './helpers.js';

// The port contracts on every MongoDB-wire server the run offers (helpers.ts).
for (const { name, uri, kind } of await contractServers()) {
  const server = `mongodb-wire (${name})`;
  const mongodbUri = () => uri;

  runEventLogContract(`MongoDB log-first log, read by a second client (the projector's), on ${server}`, {
    async open() {
      const dbName = freshDbName();
      const writer = await openMongoPrimaryStore({ uri: mongodbUri(), dbName });
      const log = await openMongoEventLog({ uri: mongodbUri(), dbName });
      return {
        log,
        writer,
        async dispose() {
          await writer.close();
          await dropDatabase(mongodbUri(), dbName);
        },
      };
    },
  });

  const projectionDbs = new Map<object, string>();
  runProjectionStoreContract(`MongoDB pending-batch projection store on ${server}`, {
    async open() {
      const dbName = freshDbName();
      const store = await openMongoProjectionStore({ uri: mongodbUri(), dbName });
      projectionDbs.set(store, dbName);
      return store;
    },
    async dispose(store) {
      const dbName = projectionDbs.get(store);
      projectionDbs.delete(store);
      if (dbName) await dropDatabase(mongodbUri(), dbName);
    },
  });

  runReadStoreContract(`MongoDB read store (secondaryPreferred client) on ${server}`, {
    async open() {
      const dbName = freshDbName();
      let now = 0;
      const primary = await openMongoPrimaryStore({ uri: mongodbUri(), dbName, clock: () => now });
      const projections = await openMongoProjectionStore({ uri: mongodbUri(), dbName });
      const read = await openMongoReadStore({ uri: mongodbUri(), dbName });
      return {
        read,
        primary,
        projections,
        setTime(ms) {
          now = ms;
        },
        dispose: () => dropDatabase(mongodbUri(), dbName),
        // FerretDB 1.x implements neither $toDate nor $first/$min/$max/$avg: the adapter refuses those queries.
        limitedServer: kind === 'ferretdb' ? { refusal: /\(FerretDB 1\.x\) does not implement/ } : undefined,
      };
    },
  });
}
