import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, fixture, gql, ids, seed } from './helpers.js';

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
  await seed(f);
});
afterAll(async () => f.close());

describe('ids in any case', () => {
  it('finds an entity and filters by a foreign key given in upper case', async () => {
    const farm = ids.farm[0]!.toUpperCase();
    const byId = await gql(f.app, '/farm/graph', `{ getById(id: "${farm}") { id } }`);
    expect(byId.body.data.getById).toEqual({ id: ids.farm[0] });
    const lower = await gql(f.app, '/coop/graph', `{ getByFarm(id: "${ids.farm[0]}") { id } }`);
    const upper = await gql(f.app, '/coop/graph', `{ getByFarm(id: "${farm}") { id } }`);
    expect(lower.body.data.getByFarm.length).toBeGreaterThan(0);
    expect(upper.body.data.getByFarm).toEqual(lower.body.data.getByFarm);
  });
});
