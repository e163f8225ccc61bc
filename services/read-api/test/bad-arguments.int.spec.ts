// A bad argument is an error on its own field, with the code REST uses for the same mistake:
// a malformed id is EGGMESH_BAD_ID, a `limit` outside 1..max (or a negative `at`) EGGMESH_BAD_QUERY.
// The field answers null; its sibling fields still answer, and the response is 200.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, fixture, gql, ids, seed } from './helpers.js';

let f: Fixture;
beforeAll(async () => {
  f = await fixture({ env: { EGGMESH_LIST_DEFAULT_LIMIT: '3', EGGMESH_LIST_MAX_LIMIT: '3' } });
  await seed(f);
});
afterAll(async () => f.close());

interface GqlError {
  readonly message: string;
  readonly path?: readonly (string | number)[];
  readonly extensions: { readonly code: string; readonly classification?: string };
}
const errorsOf = (body: { errors?: GqlError[] }) =>
  (body.errors ?? []).map((e) => {
    // Marked as the client's mistake for generic tools too (graphql-java's classification).
    expect(e.extensions.classification).toBe('ValidationError');
    return { path: e.path?.join('.'), code: e.extensions.code };
  });

describe('a malformed id', () => {
  it('unified single, entity getById and id filters answer EGGMESH_BAD_ID on the field; siblings answer', async () => {
    const r = await gql(
      f.app,
      '/graphql',
      `{ bad: farm(id: "not-a-uuid") { id } good: farm(id: "${ids.farm[0]}") { name } coops: coopsByFarm(id: "x") { id } }`,
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ bad: null, good: { name: 'Sunny Acres' }, coops: null });
    expect(errorsOf(r.body)).toEqual([
      { path: 'bad', code: 'EGGMESH_BAD_ID' },
      { path: 'coops', code: 'EGGMESH_BAD_ID' },
    ]);
    const entity = await gql(f.app, '/farm/graph', '{ getById(id: "42") { id } getAll(limit: 1) { id } }');
    expect(entity.status).toBe(200);
    expect(entity.body.data.getById).toBeNull();
    expect(entity.body.data.getAll).toHaveLength(1);
    expect(errorsOf(entity.body)).toEqual([{ path: 'getById', code: 'EGGMESH_BAD_ID' }]);
    const filter = await gql(f.app, '/coop/graph', '{ getByFarm(id: "nope") { id } }');
    expect(errorsOf(filter.body)).toEqual([{ path: 'getByFarm', code: 'EGGMESH_BAD_ID' }]);
  });

  it('a well-formed id that matches nothing is still null without an error', async () => {
    const r = await gql(f.app, '/graphql', '{ farm(id: "00000000-0000-4000-8000-000000000000") { id } }');
    expect(r.status).toBe(200);
    expect(r.body.data.farm).toBeNull();
    expect(r.body.errors).toBeUndefined();
  });
});

describe('a limit outside 1..max', () => {
  it('over the maximum or below 1 on a root list: EGGMESH_BAD_QUERY on that field, siblings answer', async () => {
    for (const limit of [4, 0, -1]) {
      const r = await gql(
        f.app,
        '/graphql',
        `{ over: farms(limit: ${limit}) { id } ok: farms(limit: 1) { id } }`,
      );
      expect(r.status).toBe(200);
      expect(r.body.data.over).toBeNull();
      expect(r.body.data.ok).toHaveLength(1);
      expect(errorsOf(r.body)).toEqual([{ path: 'over', code: 'EGGMESH_BAD_QUERY' }]);
      expect(r.body.errors[0].message).toContain('between 1 and 3');
    }
  });

  it('on a relation: only that relation is null, the parent row answers; also from variables, compiled or not', async () => {
    const q = `query ($n: Int) { hen(id: "${ids.hen[0]}") { name layReports(limit: $n) { id } } }`;
    for (let run = 0; run < 3; run++) {
      for (const n of [0, 4]) {
        const r = await gql(f.app, '/graphql', q, { variables: { n } });
        expect(r.status).toBe(200);
        expect(r.body.data.hen).toEqual({ name: expect.any(String), layReports: null });
        expect(errorsOf(r.body)).toEqual([{ path: 'hen.layReports', code: 'EGGMESH_BAD_QUERY' }]);
      }
    }
  });

  it('on the per-entity endpoints too', async () => {
    const r = await gql(
      f.app,
      '/farm/graph',
      '{ getAll(limit: 0) { id } getByZone(zone: "north", limit: 1) { id } }',
    );
    expect(r.status).toBe(200);
    expect(r.body.data.getAll).toBeNull();
    expect(r.body.data.getByZone).toHaveLength(1);
    expect(errorsOf(r.body)).toEqual([{ path: 'getAll', code: 'EGGMESH_BAD_QUERY' }]);
  });
});

describe('a negative at', () => {
  it('is EGGMESH_BAD_QUERY on its field, as REST refuses ?at=-1', async () => {
    const r = await gql(
      f.app,
      '/graphql',
      `{ a: farm(id: "${ids.farm[0]}", at: -1) { id } b: farms(at: -5) { id } }`,
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ a: null, b: null });
    expect(errorsOf(r.body)).toEqual([
      { path: 'a', code: 'EGGMESH_BAD_QUERY' },
      { path: 'b', code: 'EGGMESH_BAD_QUERY' },
    ]);
  });
});
