// Every field the catalogue lets clients filter and sort by (queryFields) has an index on the
// MongoDB tier: the adapters create `by_<field>` on each entity's current and versions collections
// (the primary's for actors and events, the projection store's for projections), read back here
// with listIndexes from the run's MongoDB-wire server.
import { entities, entityNames } from '@eggmesh/schema';
import { openMongoPrimaryStore, openMongoProjectionStore } from '@eggmesh/store-mongodb';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dropDatabase, freshDbName, mongodbUri } from './helpers.js';

const dbName = freshDbName();
let client: MongoClient;

beforeAll(async () => {
  const primary = await openMongoPrimaryStore({ uri: mongodbUri(), dbName });
  const projections = await openMongoProjectionStore({ uri: mongodbUri(), dbName });
  await projections.close();
  await primary.close();
  client = new MongoClient(mongodbUri(), { serverSelectionTimeoutMS: 5000 });
});
afterAll(async () => {
  await client?.close();
  await dropDatabase(mongodbUri(), dbName);
});

it.each(entityNames)(
  '%s: every queryable field leads an index of its current and versions rows',
  async (entity) => {
    const fields = Object.keys(entities[entity].queryFields);
    expect(fields.length).toBeGreaterThan(0);
    for (const suffix of ['current', 'versions'] as const) {
      const indexes = await client.db(dbName).collection(`${entity}_${suffix}`).listIndexes().toArray();
      const leading = new Set(indexes.map((index) => Object.keys(index.key as object)[0]));
      // `id`, always queryable: `_id` on current rows, (id, created_at) on versions.
      expect(leading.has(suffix === 'current' ? '_id' : 'id'), `${entity}_${suffix} id`).toBe(true);
      for (const field of fields) {
        expect(leading.has(`payload.${field}`), `${entity}_${suffix}.${field}`).toBe(true);
      }
    }
  },
);
