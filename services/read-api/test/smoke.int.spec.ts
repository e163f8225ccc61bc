import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixture, gql, ids, seed, type Fixture } from './helpers.js';

let f: Fixture;
beforeAll(async () => { f = await fixture(); await seed(f); });
afterAll(async () => f.close());

it('smoke', async () => {
  const r = await gql(f.app, '/farm/graph', `{ getById(id: "${ids.farm[0]}") { id name coops { id name hens { id name layReports { id eggs } productivity { total_eggs eggs_today } } } farmOutput { eggs_today } } }`);
  console.log(JSON.stringify(r.body, null, 1));
  const u = await gql(f.app, '/graphql', `{ farms { id zone } coopsByFarm(id: "${ids.farm[0]}") { id farm { name } } }`);
  console.log(JSON.stringify(u.body));
  for (const q of ['{ getById(id: 1', '{ nope }', '{ getAll(limit: -1) { id } }']) {
    const e = await gql(f.app, '/farm/graph', q);
    console.log(e.status, JSON.stringify(e.body));
  }
  const g = await f.app.inject({ url: '/graphiql' });
  console.log(g.statusCode, g.body.slice(0, 100));
  expect(r.status).toBe(200);
});
