import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, fixture, gql, uuid } from './helpers.js';

const coops = [uuid(2, 1), uuid(2, 2)];
const hens = Array.from({ length: 9 }, (_, i) => ({
  id: uuid(3, i + 1),
  name: `hen ${i}`,
  coop_id: coops[i % 2] as string,
  breed: ['leghorn', 'silkie', 'orpington'][i % 3] as string,
  dob: `2025-0${9 - i}-01`,
}));
let f: Fixture;

beforeAll(async () => {
  f = await fixture({ env: { EGGMESH_LIST_DEFAULT_LIMIT: '2', EGGMESH_LIST_MAX_LIMIT: '5' } });
  await f.write(
    hens.map(({ id, ...payload }) => ({ op: 'create' as const, entity: 'hen' as const, id, payload })),
  );
  await f.write([
    ...[0, 1, 2].map((i) => ({
      op: 'create' as const,
      entity: 'lay_report' as const,
      id: uuid(4, i + 1),
      // 10:00Z, 11:30+02:00 (09:30Z), 12:00Z: text order is not time order.
      payload: {
        hen_id: hens[i]?.id,
        coop_id: coops[0],
        farm_id: coops[1],
        eggs: i + 1,
        timestamp: ['2026-11-20T10:00:00Z', '2026-11-20T11:30:00+02:00', '2026-11-20T12:00:00Z'][i],
      },
    })),
  ]);
});
afterAll(async () => f.close());

const HENS = `query ($where: HenWhere, $orderBy: [HenOrderBy!], $first: Int, $after: String) {
  hensConnection(where: $where, orderBy: $orderBy, first: $first, after: $after) {
    totalCount
    nodes { id breed dob }
    edges { cursor node { id } }
    pageInfo { hasNextPage endCursor }
  }
}`;

it('hensConnection filters, sorts, counts and pages with cursors', async () => {
  const variables = {
    where: { coop_id: { eq: coops[0]?.toUpperCase() }, breed: { in: ['leghorn', 'silkie'] } },
    orderBy: [{ dob: 'ASC' }],
    first: 2,
  };
  const want = hens
    .filter((h) => h.coop_id === coops[0] && ['leghorn', 'silkie'].includes(h.breed))
    .sort((a, b) => a.dob.localeCompare(b.dob));
  const r = await gql(f.app, '/graphql', HENS, { variables });
  expect(r.body.errors).toBeUndefined();
  const page = r.body.data.hensConnection;
  expect(page.totalCount).toBe(want.length);
  expect(page.nodes.map((n: { id: string }) => n.id)).toEqual(want.slice(0, 2).map((h) => h.id));
  expect(page.edges.at(-1).cursor).toBe(page.pageInfo.endCursor);
  expect(page.pageInfo.hasNextPage).toBe(true);
  const next = await gql(f.app, '/graphql', HENS, {
    variables: { ...variables, after: page.pageInfo.endCursor },
  });
  expect(next.body.data.hensConnection.nodes.map((n: { id: string }) => n.id)).toEqual(
    want.slice(2, 4).map((h) => h.id),
  );
});

it('or/not combine filters; orderBy keys apply in order with id breaking ties', async () => {
  const r = await gql(f.app, '/graphql', HENS, {
    variables: {
      where: {
        or: [{ breed: { eq: 'orpington' } }, { dob: { gte: '2025-07-01' } }],
        not: { dob: { eq: '2025-09-01' } },
      },
      orderBy: [{ breed: 'DESC' }, { id: 'DESC' }],
      first: 5,
    },
  });
  expect(r.body.errors).toBeUndefined();
  const want = hens
    .filter((h) => (h.breed === 'orpington' || h.dob >= '2025-07-01') && h.dob !== '2025-09-01')
    .sort((a, b) => b.breed.localeCompare(a.breed) || b.id.localeCompare(a.id));
  expect(r.body.data.hensConnection.nodes.map((n: { id: string }) => n.id)).toEqual(want.map((h) => h.id));
  expect(r.body.data.hensConnection.totalCount).toBe(want.length);
});

it('timestamps compare as instants, whatever their offset', async () => {
  const r = await gql(
    f.app,
    '/graphql',
    `{ layReportsConnection(where: { timestamp: { gte: "2026-11-20T09:45:00Z" } }, orderBy: [{ timestamp: ASC }]) {
        totalCount nodes { id eggs } } }`,
  );
  expect(r.body.errors, JSON.stringify(r.body)).toBeUndefined();
  expect(r.body.data.layReportsConnection.nodes.map((n: { eggs: number }) => n.eggs)).toEqual([1, 3]);
});

it('two fields in one orderBy or first past the maximum is EGGMESH_BAD_QUERY', async () => {
  for (const args of ['orderBy: [{ breed: ASC, dob: DESC }]', 'first: 6', 'after: "nonsense"']) {
    const r = await gql(f.app, '/graphql', `{ hensConnection(${args}) { totalCount } }`);
    expect(r.body.errors?.[0]?.extensions?.code, JSON.stringify(r.body)).toBe('EGGMESH_BAD_QUERY');
  }
  const unknown = await gql(
    f.app,
    '/graphql',
    '{ hensConnection(where: { name: { eq: "x" } }) { totalCount } }',
  );
  expect(unknown.status).toBe(400);
  expect(unknown.body.errors[0].message).toContain('name');
});

it('layReportsAggregate groups by a field and a time bucket, computed by the store', async () => {
  const r = await gql(
    f.app,
    '/graphql',
    `{ layReportsAggregate(groupBy: [farm_id], bucket: HOUR, where: { timestamp: { lt: "2026-11-20T12:00:00Z" } }) {
        group { farm_id } bucket count sum { eggs } min { eggs } max { eggs } avg { eggs } } }`,
  );
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  // 11:30+02:00 is 09:30Z: in the 09:00 bucket, before the 10:00Z report.
  expect(r.body.data.layReportsAggregate).toEqual([
    {
      group: { farm_id: coops[1] },
      bucket: '2026-11-20T09:00:00.000Z',
      count: 1,
      sum: { eggs: 2 },
      min: { eggs: 2 },
      max: { eggs: 2 },
      avg: { eggs: 2 },
    },
    {
      group: { farm_id: coops[1] },
      bucket: '2026-11-20T10:00:00.000Z',
      count: 1,
      sum: { eggs: 1 },
      min: { eggs: 1 },
      max: { eggs: 1 },
      avg: { eggs: 1 },
    },
  ]);
  const all = await gql(
    f.app,
    '/graphql',
    '{ layReportsAggregate(bucket: WEEK) { bucket count avg { eggs } } }',
  );
  // 2026-11-20 is a Friday: its week starts Monday 2026-11-16.
  expect(all.body.data.layReportsAggregate).toEqual([
    { bucket: '2026-11-16T00:00:00.000Z', count: 3, avg: { eggs: 2 } },
  ]);
  const many = await gql(f.app, '/graphql', '{ layReportsAggregate(groupBy: [hen_id]) { count } }', {});
  expect(many.body.data.layReportsAggregate).toHaveLength(3);
});

it('the MeshQL queries answer as before beside the connections', async () => {
  const r = await gql(f.app, '/hen/graph', `{ getByCoop(id: "${coops[1]}") { id } }`);
  expect(r.body.data.getByCoop.map((n: { id: string }) => n.id)).toEqual(
    hens.filter((h) => h.coop_id === coops[1]).map((h) => h.id),
  );
});
