import { randomUUID } from 'node:crypto';
import type { LogEntry } from '@eggmesh/store';
import { openMongoPrimaryStore } from '@eggmesh/store-mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { dropDatabase, freshDbName, mongodbServer, mongodbUri } from './helpers.js';

describe(`MongoPrimaryStore.importLog on ${mongodbServer()}`, () => {
  let dbName = '';
  afterEach(async () => {
    await dropDatabase(mongodbUri(), dbName);
  });

  it('loads a log with its own positions and times; reads, `at` reads and later commits follow it', async () => {
    dbName = freshDbName();
    const store = await openMongoPrimaryStore({ uri: mongodbUri(), dbName, clock: () => 5_000 });
    try {
      const [a, b] = [randomUUID(), randomUUID()];
      const farm = (name: string) => ({ name, farm_type: 'local_farm', zone: 'north' });
      const entries: LogEntry[] = [
        {
          position: 1,
          entity: 'farm',
          id: a,
          op: 'create',
          payload: farm('A'),
          previous: null,
          createdAt: 1000,
        },
        {
          position: 2,
          entity: 'farm',
          id: b,
          op: 'create',
          payload: farm('B'),
          previous: null,
          createdAt: 1001,
        },
        {
          position: 3,
          entity: 'farm',
          id: a,
          op: 'update',
          payload: farm('A2'),
          previous: farm('A'),
          createdAt: 1002,
        },
      ];
      await store.importLog(entries.slice(0, 2));
      await store.importLog(entries.slice(2));
      await store.importLog([
        {
          position: 4,
          entity: 'farm',
          id: b,
          op: 'delete',
          payload: null,
          previous: farm('B'),
          createdAt: 1003,
        },
      ]);
      expect(await store.log.head()).toBe(4);
      expect((await store.log.read(0, 10)).slice(0, 3)).toEqual(entries);
      expect(await store.get('farm', a)).toEqual({ id: a, createdAt: 1002, payload: farm('A2') });
      expect((await store.get('farm', a, { at: 1001 }))?.payload.name).toBe('A');
      expect(await store.get('farm', b)).toBeNull();
      // The next commit takes the next position and a time after the imported ones, and replaces A2.
      const next = await store.commit([{ op: 'update', entity: 'farm', id: a, payload: farm('A3') }]);
      expect(next.position).toBe(5);
      expect(next.records[0]?.createdAt).toBe(5_000);
      expect((await store.log.read(4, 10))[0]?.previous).toEqual(farm('A2'));
    } finally {
      await store.close();
    }
  });
});
