import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, fixture, gql, uuid } from './helpers.js';

const farms = Array.from({ length: 7 }, (_, i) => uuid(1, i + 1));
let f: Fixture;

beforeAll(async () => {
  f = await fixture({ env: { EGGMESH_LIST_DEFAULT_LIMIT: '2', EGGMESH_LIST_MAX_LIMIT: '3' } });
  // Written out of id order: pages follow ids, not write order.
  for (const id of [...farms].reverse()) {
    await f.write([
      { op: 'create', entity: 'farm', id, payload: { name: id, farm_type: 'homestead', zone: 'east' } },
    ]);
  }
});
afterAll(async () => f.close());

const idsOf = (rows: Array<{ id: string }>) => rows.map((r) => r.id);

it('per-entity getAll and filters without limit return every row, as MeshQL does; with limit, a page', async () => {
  const r = await gql(
    f.app,
    '/farm/graph',
    '{ all: getAll { id } zone: getByZone(zone: "east") { id } page: getAll(limit: 3) { id } }',
  );
  expect(r.body.errors).toBeUndefined();
  expect(idsOf(r.body.data.all)).toEqual(farms);
  expect(idsOf(r.body.data.zone)).toEqual(farms);
  expect(idsOf(r.body.data.page)).toEqual(farms.slice(0, 3));
  const rest = await gql(f.app, '/farm/graph', `{ getAll(after: "${farms[1]}") { id } }`);
  expect(idsOf(rest.body.data.getAll)).toEqual(farms.slice(2));
});

it('the unified /graphql keeps explicit paging: the default page size, up to the maximum; past it that field fails', async () => {
  const r = await gql(f.app, '/graphql', '{ first: farms { id } big: farms(limit: 3) { id } }');
  expect(idsOf(r.body.data.first)).toEqual(farms.slice(0, 2));
  expect(idsOf(r.body.data.big)).toEqual(farms.slice(0, 3));
  const over = await gql(
    f.app,
    '/farm/graph',
    '{ first: getAll(limit: 2) { id } big: getAll(limit: 4) { id } }',
  );
  expect(over.status).toBe(200);
  expect(idsOf(over.body.data.first)).toEqual(farms.slice(0, 2));
  expect(over.body.data.big).toBeNull();
  expect(over.body.errors[0].extensions.code).toBe('EGGMESH_BAD_QUERY');
  expect(over.body.errors[0].path).toEqual(['big']);
  expect(over.body.errors[0].message).toContain('between 1 and 3');
});

it('a whole list larger than the row budget is refused with its error', async () => {
  const small = await fixture({
    env: { EGGMESH_LIST_DEFAULT_LIMIT: '2', EGGMESH_LIST_MAX_LIMIT: '3' },
    graphql: { maxRows: 5 },
  });
  try {
    for (const id of farms) {
      await small.write([
        { op: 'create', entity: 'farm', id, payload: { name: id, farm_type: 'homestead', zone: 'east' } },
      ]);
    }
    const r = await gql(small.app, '/farm/graph', '{ getAll { id } }');
    expect(r.body.data?.getAll ?? null).toBeNull();
    expect(r.body.errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_RESPONSE_TOO_LARGE');
  } finally {
    await small.close();
  }
});

it('walks every row page by page with after', async () => {
  const seen: string[] = [];
  let after: string | null = null;
  for (let page = 0; page < 10; page++) {
    const r = await gql(
      f.app,
      '/farm/graph',
      'query ($after: ID) { getAll(limit: 3, after: $after) { id } }',
      {
        variables: { after },
      },
    );
    const rows = idsOf(r.body.data.getAll);
    if (rows.length === 0) break;
    seen.push(...rows);
    after = rows.at(-1) ?? null;
  }
  expect(seen).toEqual(farms);
});

it('pages filters and the unified lists the same way', async () => {
  const r = await gql(
    f.app,
    '/graphql',
    `{ a: farmsByZone(zone: "east", limit: 2, after: "${farms[1]}") { id } b: farms(after: "${farms[5]}") { id } }`,
  );
  expect(idsOf(r.body.data.a)).toEqual(farms.slice(2, 4));
  expect(idsOf(r.body.data.b)).toEqual(farms.slice(6));
  const per = await gql(
    f.app,
    '/farm/graph',
    `{ getByZone(zone: "east", limit: 1, after: "${farms[0]}") { id } }`,
  );
  expect(idsOf(per.body.data.getByZone)).toEqual([farms[1]]);
});

it('refuses a limit below 1 on its field, also once the query is compiled (jit)', async () => {
  for (let i = 0; i < 3; i++) {
    const r = await gql(f.app, '/farm/graph', 'query ($n: Int) { getAll(limit: $n) { id } }', {
      variables: { n: -i },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ getAll: null });
    expect(r.body.errors[0].extensions.code).toBe('EGGMESH_BAD_QUERY');
    expect(r.body.errors[0].path).toEqual(['getAll']);
  }
});

it('documents the defaults in the schema', async () => {
  const r = await gql(f.app, '/graphql', '{ __schema { queryType { fields { name description } } } }');
  const farmsField = r.body.data.__schema.queryType.fields.find((x: { name: string }) => x.name === 'farms');
  expect(farmsField.description).toContain('default 2, at most 3');
});
