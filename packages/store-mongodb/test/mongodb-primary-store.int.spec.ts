import { runPrimaryStoreContract } from '@eggmesh/store/testing';
import { openMongoPrimaryStore } from '@eggmesh/store-mongodb';
import { contractServers, dropDatabase, freshDbName } from './helpers.js';

// The primary-store contract on every MongoDB-wire server the run offers (helpers.ts).
for (const server of await contractServers()) {
  const dbNames: string[] = [];
  runPrimaryStoreContract(`MongoDB adapter, log-first commits, on ${server.name}`, {
    async open(clock) {
      const dbName = freshDbName();
      dbNames.push(dbName);
      return openMongoPrimaryStore({ uri: server.uri, dbName, clock });
    },
    async dispose() {
      for (const dbName of dbNames.splice(0)) await dropDatabase(server.uri, dbName);
    },
  });
}
