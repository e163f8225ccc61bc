// List relations with `where` and `orderBy` (`coop { hens(where:, orderBy:, limit:) }`): each parent's
// page equals the same filter and order computed over all rows in memory, and every relation level
// is one store query when no parent has more matches than its page.
import type { EntityName } from '@eggmesh/schema';
import {
  type OrderBy,
  planQuery,
  type QueryOptions,
  queryInMemory,
  type ReadStore,
  type StoredRecord,
  type Where,
} from '@eggmesh/store';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, fixture, gql, uuid } from './helpers.js';

const farms = [uuid(1, 1), uuid(1, 2)];
const coops = Array.from({ length: 4 }, (_, i) => ({
  id: uuid(2, i + 1),
  payload: { name: `coop ${i}`, farm_id: farms[i % 2], capacity: 10 + (i % 3) * 5, coop_type: 'barn' },
}));
const breeds = ['leghorn', 'silkie', 'orpington'];
const hens = Array.from({ length: 16 }, (_, i) => ({
  id: uuid(3, i + 1),
  payload: {
    name: `hen ${i}`,
    // Coop 3 gets no hens: an empty page.
    coop_id: coops[i % 3]!.id,
    breed: breeds[i % 3],
    ...(i % 4 === 3 ? {} : { status: i % 2 ? 'active' : 'retired' }),
    dob: `2025-0${(i % 9) + 1}-01`,
  },
}));
const reports = Array.from({ length: 30 }, (_, i) => ({
  id: uuid(4, i + 1),
  payload: {
    hen_id: hens[i % 6]!.id,
    coop_id: hens[i % 6]!.payload.coop_id,
    farm_id: farms[0],
    eggs: (i * 7) % 5,
    quality: ['grade_a', 'grade_b'][i % 2],
    timestamp: new Date(Date.UTC(2026, 10, 1) + i * 3_600_000).toISOString(),
  },
}));

let f: Fixture;
/** Store queries per request, counted by the wrapped store. */
let queries = 0;

beforeAll(async () => {
  f = await fixture({
    env: { EGGMESH_LIST_DEFAULT_LIMIT: '3', EGGMESH_LIST_MAX_LIMIT: '20' },
    wrap: (store) =>
      new Proxy(store, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver);
          if (name !== 'query' || typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            queries += 1;
            return value.apply(target, args);
          };
        },
      }) as unknown as ReadStore,
  });
  await f.write([
    ...farms.map((id, i) => ({
      op: 'create' as const,
      entity: 'farm' as const,
      id,
      payload: { name: `farm ${i}`, farm_type: 'megafarm', zone: 'north' },
    })),
    ...coops.map(({ id, payload }) => ({ op: 'create' as const, entity: 'coop' as const, id, payload })),
    ...hens.map(({ id, payload }) => ({ op: 'create' as const, entity: 'hen' as const, id, payload })),
    ...reports.map(({ id, payload }) => ({
      op: 'create' as const,
      entity: 'lay_report' as const,
      id,
      payload,
    })),
  ]);
});
afterAll(async () => f.close());

/** What the page of one parent must be: the filter and order over every row, in memory. */
async function expected(
  entity: EntityName,
  field: string,
  key: string,
  where: Where | undefined,
  orderBy: readonly OrderBy[],
  limit: number,
): Promise<string[]> {
  const all: StoredRecord[] = await f.store.list(entity, { limit: 10_000 });
  const options: QueryOptions = {
    where: where ? { and: [{ [field]: { eq: key } }, where] } : { [field]: { eq: key } },
    orderBy,
    first: limit,
  };
  return queryInMemory(all, planQuery(entity, options)).records.map((r) => r.id);
}

const QUERY = `query ($coopWhere: CoopWhere, $coopOrder: [CoopOrderBy!], $henWhere: HenWhere, $henOrder: [HenOrderBy!], $henLimit: Int, $reportWhere: LayReportWhere, $reportOrder: [LayReportOrderBy!], $reportLimit: Int) {
  farms {
    id
    coops(where: $coopWhere, orderBy: $coopOrder) {
      id
      hens(where: $henWhere, orderBy: $henOrder, limit: $henLimit) {
        id
        layReports(where: $reportWhere, orderBy: $reportOrder, limit: $reportLimit) { id }
      }
    }
  }
}`;

interface Tree {
  id: string;
  coops: Array<{ id: string; hens: Array<{ id: string; layReports: Array<{ id: string }> }> }>;
}

const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);
const order = (fields: readonly string[]) =>
  fc
    .uniqueArray(fc.tuple(pick(fields), pick(['ASC', 'DESC'] as const)), {
      minLength: 1,
      maxLength: 2,
      selector: ([field]) => field,
    })
    .map((keys) => keys.map(([field, direction]) => ({ field, direction }) as OrderBy));
const henWhere = fc.oneof(
  fc.record({ breed: fc.subarray(breeds, { minLength: 1 }).map((v) => ({ in: v })) }),
  fc.record({ status: pick(['active', 'retired']).map((eq) => ({ eq })) }),
  fc.record({ not: fc.record({ dob: pick(['2025-03-01', '2025-06-01']).map((gte) => ({ gte })) }) }),
);
const reportWhere = fc.oneof(
  fc.record({ eggs: fc.integer({ min: 0, max: 4 }).map((gte) => ({ gte })) }),
  fc.record({ quality: pick(['grade_a', 'grade_b']).map((eq) => ({ eq })) }),
);
const gqlOrder = (keys: readonly OrderBy[] | undefined) =>
  keys?.map(({ field, direction }) => ({ [field]: direction }));

it('each parent gets the first rows of its own filter and order, as computed in memory', async () => {
  let nonEmpty = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.record(
        {
          coopWhere: fc.record({ capacity: fc.integer({ min: 10, max: 20 }).map((gte) => ({ gte })) }),
          coopOrder: order(['capacity', 'coop_type']),
          henWhere,
          henOrder: order(['breed', 'status', 'dob']),
          henLimit: fc.integer({ min: 1, max: 6 }),
          reportWhere,
          reportOrder: order(['eggs', 'timestamp', 'quality']),
          reportLimit: fc.integer({ min: 1, max: 4 }),
        },
        { requiredKeys: ['henLimit', 'reportLimit'] },
      ),
      async (args) => {
        const r = await gql(f.app, '/graphql', QUERY, {
          variables: {
            ...args,
            coopOrder: gqlOrder(args.coopOrder),
            henOrder: gqlOrder(args.henOrder),
            reportOrder: gqlOrder(args.reportOrder),
          },
        });
        expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
        for (const farm of r.body.data.farms as Tree[]) {
          const coopIds = farm.coops.map((c) => c.id);
          expect(coopIds).toEqual(
            await expected('coop', 'farm_id', farm.id, args.coopWhere, args.coopOrder ?? [], 3),
          );
          for (const coop of farm.coops) {
            expect(coop.hens.map((h) => h.id)).toEqual(
              await expected('hen', 'coop_id', coop.id, args.henWhere, args.henOrder ?? [], args.henLimit),
            );
            for (const hen of coop.hens) {
              const ids = hen.layReports.map((l) => l.id);
              nonEmpty += ids.length > 0 ? 1 : 0;
              expect(ids).toEqual(
                await expected(
                  'lay_report',
                  'hen_id',
                  hen.id,
                  args.reportWhere,
                  args.reportOrder ?? [],
                  args.reportLimit,
                ),
              );
            }
          }
        }
      },
    ),
    { numRuns: 30, seed: 43 },
  );
  expect(nonEmpty).toBeGreaterThan(30);
});

it('one store query per relation level while no parent has more matches than its page', async () => {
  const variables = {
    coopOrder: [{ capacity: 'DESC' }],
    henWhere: { breed: { in: breeds } },
    henOrder: [{ dob: 'DESC' }],
    henLimit: 20,
    reportWhere: { eggs: { gte: 0 } },
    reportOrder: [{ eggs: 'ASC' }],
    reportLimit: 20,
  };
  queries = 0;
  const r = await gql(f.app, '/graphql', QUERY, { variables });
  expect(r.body.errors).toBeUndefined();
  const hensRead = (r.body.data.farms as Tree[]).flatMap((farm) => farm.coops.flatMap((c) => c.hens));
  expect(hensRead).toHaveLength(hens.length);
  // farms (a list, not a query), then coops, hens and lay reports: one query each.
  expect(queries).toBe(3);
  // A page smaller than some parent's matches: the batch stops inside that parent's rows and the
  // parents it did not finish are read one by one; the answer is the same as computed in memory.
  queries = 0;
  const small = await gql(f.app, '/graphql', QUERY, {
    variables: { ...variables, henLimit: 1, reportLimit: 1 },
  });
  expect(small.body.errors).toBeUndefined();
  for (const farm of small.body.data.farms as Tree[]) {
    for (const coop of farm.coops) {
      expect(coop.hens.map((h) => h.id)).toEqual(
        await expected(
          'hen',
          'coop_id',
          coop.id,
          variables.henWhere,
          [{ field: 'dob', direction: 'DESC' }],
          1,
        ),
      );
    }
  }
  expect(queries).toBeGreaterThan(3);
});

it('after with where or orderBy on a relation is EGGMESH_BAD_QUERY on that field', async () => {
  const r = await gql(
    f.app,
    '/graphql',
    `{ coop(id: "${coops[0]!.id}") { id hens(orderBy: [{ dob: ASC }], after: "${hens[0]!.id}") { id } } }`,
  );
  expect(r.body.data.coop.id).toBe(coops[0]!.id);
  expect(r.body.data.coop.hens).toBeNull();
  expect(r.body.errors[0].extensions.code).toBe('EGGMESH_BAD_QUERY');
  expect(r.body.errors[0].path).toEqual(['coop', 'hens']);
});
