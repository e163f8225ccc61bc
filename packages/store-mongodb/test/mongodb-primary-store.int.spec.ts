import { runPrimaryStoreContract } from '@eggmesh/store/testing';
import { openMongoPrimaryStore } from '@eggmesh/store-mongodb';
import { dropDatabase, freshDbName, mongodbServer, mongodbUri } from './helpers.js';

const dbNames: string[] = [];

runPrimaryStoreContract(`MongoDB adapter, log-first commits, on ${mongodbServer()}`, {
  async open(clock) {
    const dbName = freshDbName();
    dbNames.push(dbName);
    const store = await openMongoPrimaryStore({ uri: mongodbUri(), dbName, clock });
    if (store.commitMode !== 'log-first') throw new Error(`expected log-first, got ${store.commitMode}`);
    return store;
  },
  async dispose() {
    for (const dbName of dbNames.splice(0)) await dropDatabase(mongodbUri(), dbName);
  },
});
