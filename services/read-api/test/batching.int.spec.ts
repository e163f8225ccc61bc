import type { EntityName } from '@eggmesh/schema';
import type { WriteOperation } from '@eggmesh/store';
import type { SqliteReadStore } from '@eggmesh/store-sqlite';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { ReadStore } from '../src/index.js';
import { type Fixture, fixture, gql, T0, uuid } from './helpers.js';

interface Call {
  readonly method: string;
  readonly entity: EntityName;
  /** How many keys a batched call carried. */
  readonly keys: number;
}

const READS = new Set(['get', 'getMany', 'findBy', 'findByAny', 'list']);
const calls: Call[] = [];

/** The real store behind a proxy that records each read: counting, not mocking. */
function counting(store: SqliteReadStore): ReadStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (!READS.has(String(property))) return value.bind(target);
      return (...args: unknown[]) => {
        const keys =
          property === 'getMany' || property === 'findByAny'
            ? (args[property === 'getMany' ? 1 : 2] as unknown[]).length
            : 1;
        calls.push({ method: String(property), entity: args[0] as EntityName, keys });
        return value.apply(target, args);
      };
    },
  });
}

const FARMS = 5;
const COOPS_PER_FARM = 3;
const HENS_PER_COOP = 4;
const REPORTS_PER_HEN = 2;

let f: Fixture;
beforeAll(async () => {
  f = await fixture({ wrap: counting });
  const ops: WriteOperation[] = [];
  let coop = 0;
  let hen = 0;
  let report = 0;
  for (let fi = 0; fi < FARMS; fi++) {
    const farmId = uuid(1, fi);
    ops.push({
      op: 'create',
      entity: 'farm',
      id: farmId,
      payload: { name: `farm ${fi}`, farm_type: 'megafarm', zone: 'north' },
    });
    for (let ci = 0; ci < COOPS_PER_FARM; ci++) {
      const coopId = uuid(2, coop++);
      ops.push({
        op: 'create',
        entity: 'coop',
        id: coopId,
        payload: { name: 'c', farm_id: farmId, capacity: 9, coop_type: 'barn' },
      });
      for (let hi = 0; hi < HENS_PER_COOP; hi++) {
        const henId = uuid(3, hen++);
        ops.push({
          op: 'create',
          entity: 'hen',
          id: henId,
          payload: { name: 'h', coop_id: coopId, breed: 'sussex' },
        });
        for (let ri = 0; ri < REPORTS_PER_HEN; ri++) {
          const payload = {
            hen_id: henId,
            coop_id: coopId,
            farm_id: farmId,
            eggs: 1,
            timestamp: new Date(T0).toISOString(),
          };
          ops.push({ op: 'create', entity: 'lay_report', id: uuid(4, report++), payload });
        }
      }
    }
  }
  await f.write(ops);
});
afterAll(async () => f.close());
beforeEach(() => {
  calls.length = 0;
});

const TREE = '{ getAll(limit: 10) { id coops { id hens { id layReports { id eggs } } } } }';

it('reads a farm → coops → hens → layReports tree over several farms with one store call per level', async () => {
  const r = await gql(f.app, '/farm/graph', TREE);
  expect(r.body.errors).toBeUndefined();
  const farms = r.body.data.getAll;
  expect(farms).toHaveLength(FARMS);
  const reports = farms.flatMap((x: { coops: Array<{ hens: Array<{ layReports: unknown[] }> }> }) =>
    x.coops.flatMap((c) => c.hens.flatMap((h) => h.layReports)),
  );
  expect(reports).toHaveLength(FARMS * COOPS_PER_FARM * HENS_PER_COOP * REPORTS_PER_HEN);
  expect(calls).toEqual([
    { method: 'list', entity: 'farm', keys: 1 },
    { method: 'findByAny', entity: 'coop', keys: FARMS },
    { method: 'findByAny', entity: 'hen', keys: FARMS * COOPS_PER_FARM },
    { method: 'findByAny', entity: 'lay_report', keys: FARMS * COOPS_PER_FARM * HENS_PER_COOP },
  ]);
});

it('batches the same way on the compiled (jit) path and on /graphql', async () => {
  await gql(f.app, '/farm/graph', TREE);
  calls.length = 0;
  await gql(f.app, '/farm/graph', TREE);
  expect(calls).toHaveLength(4);
  calls.length = 0;
  const r = await gql(f.app, '/graphql', '{ farms(limit: 10) { coops { hens { layReports { id } } } } }');
  expect(r.body.errors).toBeUndefined();
  expect(calls.map((c) => c.method)).toEqual(['list', 'findByAny', 'findByAny', 'findByAny']);
});

it('batches singles upwards and reads each parent once', async () => {
  const r = await gql(f.app, '/lay_report/graph', '{ getAll { hen { coop { farm { name } } } } }');
  expect(r.body.errors).toBeUndefined();
  expect(calls).toEqual([
    { method: 'list', entity: 'lay_report', keys: 1 },
    { method: 'getMany', entity: 'hen', keys: FARMS * COOPS_PER_FARM * HENS_PER_COOP },
    { method: 'getMany', entity: 'coop', keys: FARMS * COOPS_PER_FARM },
    { method: 'getMany', entity: 'farm', keys: FARMS },
  ]);
});

it('makes one call per distinct at, never one per parent', async () => {
  const r = await gql(
    f.app,
    '/graphql',
    `{ now: farms { coops { id } } then: farms(at: ${f.now}) { coops { id } } again: farms { coops { id } } }`,
  );
  expect(r.body.errors).toBeUndefined();
  const coopCalls = calls.filter((c) => c.entity === 'coop');
  expect(coopCalls).toHaveLength(2);
  expect(calls.filter((c) => c.entity === 'farm')).toHaveLength(3);
});
