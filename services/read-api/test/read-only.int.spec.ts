import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, fixture, seed, uuid } from './helpers.js';

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
  await seed(f);
});
afterAll(async () => f.close());

it('opens the primary read-only: the store refuses to commit', async () => {
  const attempt = f.store.primary.commit([
    {
      op: 'create',
      entity: 'farm',
      id: uuid(1, 50),
      payload: { name: 'x', farm_type: 'homestead', zone: 'n' },
    },
  ]);
  await expect(attempt).rejects.toSatisfy((e) => isStoreError(e, storeErrorCodes.READ_ONLY));
});

it('and SQLite itself refuses writes on the handle the app reads through', () => {
  expect(f.store.primary.db.readonly).toBe(true);
  expect(() => f.store.primary.db.prepare('DELETE FROM farm_current').run()).toThrow(
    /readonly|read-only|query_only/i,
  );
  expect(() =>
    f.store.primary.db
      .prepare(
        "INSERT INTO event_log (entity, entity_id, op, payload, previous, created_at) VALUES ('farm', 'x', 'delete', NULL, NULL, 1)",
      )
      .run(),
  ).toThrow();
});

it('the data is untouched', async () => {
  expect((await f.primary.list('farm', { limit: 10 })).length).toBe(3);
  expect(await f.store.replicaPosition()).toBe(f.primary.headSync());
});
