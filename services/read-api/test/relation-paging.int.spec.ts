import type { WriteOperation } from '@eggmesh/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, fixture, gql, T0, uuid } from './helpers.js';

const farm = uuid(1, 1);
const coop = uuid(2, 1);
const busy = uuid(3, 1);
const quiet = uuid(3, 2);
const reports = Array.from({ length: 8 }, (_, i) => uuid(4, i + 1));
const quietReports = [uuid(4, 100), uuid(4, 101)];

async function world(f: Fixture): Promise<void> {
  const report = (id: string, hen: string): WriteOperation => ({
    op: 'create',
    entity: 'lay_report',
    id,
    payload: { hen_id: hen, coop_id: coop, farm_id: farm, eggs: 1, timestamp: new Date(T0).toISOString() },
  });
  await f.write([
    { op: 'create', entity: 'farm', id: farm, payload: { name: 'F', farm_type: 'megafarm', zone: 'north' } },
    {
      op: 'create',
      entity: 'coop',
      id: coop,
      payload: { name: 'C', farm_id: farm, capacity: 9, coop_type: 'barn' },
    },
    { op: 'create', entity: 'hen', id: busy, payload: { name: 'Busy', coop_id: coop } },
    { op: 'create', entity: 'hen', id: quiet, payload: { name: 'Quiet', coop_id: coop } },
    // Out of id order: pages follow ids.
    ...[...reports].reverse().map((id) => report(id, busy)),
    ...quietReports.map((id) => report(id, quiet)),
  ]);
}

const idsOf = (rows: Array<{ id: string }>) => rows.map((r) => r.id);

describe('list relations page like root lists', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({ env: { EGGMESH_LIST_DEFAULT_LIMIT: '3', EGGMESH_LIST_MAX_LIMIT: '5' } });
    await world(f);
  });
  afterAll(async () => f.close());

  it('without arguments: the default page, first ids first, on both schemas', async () => {
    const unified = await gql(f.app, '/graphql', `{ hen(id: "${busy}") { layReports { id } } }`);
    expect(idsOf(unified.body.data.hen.layReports)).toEqual(reports.slice(0, 3));
    const entity = await gql(f.app, '/hen/graph', `{ getById(id: "${busy}") { name layReports { id } } }`);
    expect(idsOf(entity.body.data.getById.layReports)).toEqual(reports.slice(0, 3));
  });

  it('limit goes up to the maximum (past it the relation fails), after continues, variables work', async () => {
    const q = `query ($n: Int, $after: ID) { hen(id: "${busy}") { layReports(limit: $n, after: $after) { id } } }`;
    const full = await gql(f.app, '/graphql', q, { variables: { n: 5 } });
    expect(idsOf(full.body.data.hen.layReports)).toEqual(reports.slice(0, 5));
    const over = await gql(f.app, '/graphql', q, { variables: { n: 100 } });
    expect(over.status).toBe(200);
    expect(over.body.data.hen.layReports).toBeNull();
    expect(over.body.errors[0].extensions.code).toBe('EGGMESH_BAD_QUERY');
    const next = await gql(f.app, '/graphql', q, { variables: { n: 2, after: reports[4] } });
    expect(idsOf(next.body.data.hen.layReports)).toEqual(reports.slice(5, 7));
  });

  it('pages every parent on its own, in one batch', async () => {
    const r = await gql(f.app, '/graphql', '{ hens { name layReports(limit: 1) { id } } }');
    expect(r.body.data.hens.map((h: { layReports: Array<{ id: string }> }) => idsOf(h.layReports))).toEqual([
      [reports[0]],
      [quietReports[0]],
    ]);
  });

  it('the same relation with different pages in one query', async () => {
    const r = await gql(
      f.app,
      '/graphql',
      `{ hen(id: "${busy}") { a: layReports(limit: 1) { id } b: layReports(limit: 2, after: "${reports[0]}") { id } } }`,
    );
    expect(idsOf(r.body.data.hen.a)).toEqual([reports[0]]);
    expect(idsOf(r.body.data.hen.b)).toEqual(reports.slice(1, 3));
  });

  it('a limit below 1 fails that relation with a coded error; the row answers its other fields', async () => {
    const r = await gql(f.app, '/graphql', `{ hen(id: "${busy}") { name layReports(limit: 0) { id } } }`);
    expect(r.status).toBe(200);
    expect(r.body.data.hen).toEqual({ name: expect.any(String), layReports: null });
    expect(r.body.errors[0].extensions.code).toBe('EGGMESH_BAD_QUERY');
    expect(r.body.errors[0].path).toEqual(['hen', 'layReports']);
  });
});

describe('per-response caps on rows and bytes', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({
      graphql: { maxRows: 10, maxResponseBytes: 100_000 },
    });
    await world(f);
  });
  afterAll(async () => f.close());

  const thrice = async (query: string) => {
    const out = [];
    for (let i = 0; i < 3; i++) out.push(await gql(f.app, '/graphql', query));
    return out;
  };

  it('answers up to the row cap', async () => {
    const r = await gql(f.app, '/graphql', `{ hen(id: "${busy}") { layReports { id } } }`);
    expect(r.body.data.hen.layReports).toHaveLength(8);
  });

  it('refuses the whole response past it, with one coded error and no data', async () => {
    const aliases = Array.from({ length: 3 }, (_, i) => `a${i}: hen(id: "${busy}") { layReports { id } }`);
    for (const r of await thrice(`{ ${aliases.join(' ')} }`)) {
      expect(r.status).toBe(400);
      expect(r.body.data).toBeNull();
      expect(r.body.errors).toHaveLength(1);
      expect(r.body.errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_RESPONSE_TOO_LARGE');
    }
  });

  it('counts root list rows too (many aliases of a list)', async () => {
    const aliases = Array.from({ length: 6 }, (_, i) => `a${i}: hens { id }`);
    for (const r of await thrice(`{ ${aliases.join(' ')} }`)) {
      expect(r.body.errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_RESPONSE_TOO_LARGE');
    }
  });

  it('caps bytes', async () => {
    const small = await fixture({ graphql: { maxResponseBytes: 1500 } });
    try {
      await world(small);
      // A limit the estimate admits (50 rows × one field × 24 bytes): the rows read decide.
      const ok = await gql(small.app, '/graphql', `{ hen(id: "${quiet}") { layReports(limit: 50) { id } } }`);
      expect(ok.status).toBe(200);
      const r = await gql(small.app, '/graphql', `{ hen(id: "${busy}") { layReports(limit: 50) { id } } }`);
      expect(r.status).toBe(400);
      expect(r.body.errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_RESPONSE_TOO_LARGE');
    } finally {
      await small.close();
    }
  });
});

describe('a relation under many parents reads no more than the response can carry', () => {
  let f: Fixture;
  let rowsRead = 0;
  beforeAll(async () => {
    f = await fixture({
      graphql: { maxRows: 4 },
      // The real store, counting the rows relation reads return: counting, not mocking.
      wrap: (store) =>
        new Proxy(store, {
          get(target, property, receiver) {
            const value = Reflect.get(target, property, receiver);
            if (property !== 'findByAny' && property !== 'list') {
              return typeof value === 'function' ? value.bind(target) : value;
            }
            return async (...args: unknown[]) => {
              const rows = (await value.apply(target, args)) as unknown[];
              rowsRead += rows.length;
              return rows;
            };
          },
        }),
    });
    await world(f);
  });
  afterAll(async () => f.close());

  it('reads in chunks that fit the remaining budget and stops at the first overrun', async () => {
    rowsRead = 0;
    const r = await gql(f.app, '/graphql', '{ hens { layReports(limit: 5) { id } } }');
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_RESPONSE_TOO_LARGE');
    // The two hens (2 rows) leave room for 2: one hen's page (5 rows) is read, the other never is.
    expect(rowsRead).toBe(2 + 5);
  });

  it('stops reading sibling root lists once the rows read pass the cap', async () => {
    rowsRead = 0;
    const aliases = Array.from({ length: 10 }, (_, i) => `a${i}: hens { id }`).join(' ');
    const r = await gql(f.app, '/graphql', `{ ${aliases} }`);
    expect(r.body.errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_RESPONSE_TOO_LARGE');
    // Two rows per alias, four allowed: the third alias overruns, the other seven never read.
    expect(rowsRead).toBe(6);
  });

  it('reads in one call when the page fits', async () => {
    rowsRead = 0;
    const r = await gql(f.app, '/graphql', '{ hens { layReports(limit: 1) { id } } }');
    expect(r.status).toBe(200);
    expect(rowsRead).toBe(2 + 2);
  });
});
