import { entities, relations } from '@eggmesh/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unifiedNames } from '../src/index.js';
import { type Fixture, fixture, gql, ids, seed, uuid } from './helpers.js';

const [F0, , F2] = ids.farm;
const [C0, C1, C2] = ids.coop;
const [H0, H1, H2] = ids.hen;
const [L0, L1, L2] = ids.layReport;
const [K0, K1] = ids.container;
const [U0, U1] = ids.consumer;
const ORPHAN_COOP = uuid(2, 99);

/** Per relation `<parent>.<field>`: a parent id and the ids the relation must give (a string for singles). */
const cases: Record<string, Array<[string, string | null | string[]]>> = {
  'farm.coops': [
    [F0, [C0, C1]],
    [F2, []],
  ],
  'farm.farmOutput': [[F0, [F0]]],
  'coop.farm': [
    [C0, F0],
    [ORPHAN_COOP, null],
  ],
  'coop.hens': [
    [C0, [H0, H1]],
    [ORPHAN_COOP, []],
  ],
  'hen.coop': [[H2, C1]],
  'hen.layReports': [
    [H0, [L0, L1]],
    [H1, []],
  ],
  'hen.productivity': [[H0, [H0]]],
  'container.inventory': [[K1, [K1]]],
  'consumer.consumptionReports': [
    [U0, [ids.consumption]],
    [U1, []],
  ],
  'lay_report.hen': [[L2, H2]],
  'storage_deposit.container': [[ids.deposit, K0]],
  'storage_withdrawal.container': [[ids.withdrawal, K0]],
  'container_transfer.sourceContainer': [[ids.transfer, K0]],
  'container_transfer.destContainer': [[ids.transfer, K1]],
  'consumption_report.consumer': [[ids.consumption, U0]],
  'consumption_report.container': [[ids.consumption, K1]],
  'container_inventory.container': [[K0, K0]],
  'hen_productivity.hen': [[H0, H0]],
  'farm_output.farm': [[F0, F0]],
};

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
  await seed(f);
  // A coop whose farm does not exist: its `farm` is null, its `hens` empty.
  await f.write([
    {
      op: 'create',
      entity: 'coop',
      id: ORPHAN_COOP,
      payload: { name: 'Lost', farm_id: uuid(1, 99), capacity: 1, coop_type: 'x' },
    },
  ]);
});
afterAll(async () => f.close());

const idsOf = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map((v: { id: string }) => v.id)
    : value === null
      ? null
      : (value as { id: string }).id;

it('covers all 19 relations', () => {
  expect(relations).toHaveLength(19);
  expect(Object.keys(cases).sort()).toEqual(relations.map((r) => `${r.parent}.${r.field}`).sort());
});

describe.each(relations.map((r) => ({ ...r, key: `${r.parent}.${r.field}` })))('$key', (relation) => {
  it.each(cases[relation.key] ?? [])(
    'from %s on the per-entity endpoint and on /graphql',
    async (parentId, want) => {
      const per = await gql(
        f.app,
        `/${relation.parent}/graph`,
        `{ getById(id: "${parentId}") { id ${relation.field} { id } } }`,
      );
      expect(per.body.errors).toBeUndefined();
      expect(idsOf(per.body.data.getById[relation.field])).toEqual(want);

      const root = unifiedNames(relation.parent, entities[relation.parent].filters).single;
      const uni = await gql(f.app, '/graphql', `{ ${root}(id: "${parentId}") { ${relation.field} { id } } }`);
      expect(uni.body.errors).toBeUndefined();
      expect(idsOf(uni.body.data[root][relation.field])).toEqual(want);
    },
  );
});

describe('nested trees', () => {
  it('farm → coops → hens → layReports, downwards', async () => {
    const r = await gql(
      f.app,
      '/farm/graph',
      `{ getById(id: "${F0}") { name coops { name hens { name layReports { eggs } productivity { total_eggs } } } farmOutput { total_hens } } }`,
    );
    expect(r.body.data.getById).toEqual({
      name: 'Sunny Acres',
      coops: [
        {
          name: 'Coop A',
          hens: [
            { name: 'Henrietta', layReports: [{ eggs: 2 }, { eggs: 1 }], productivity: [{ total_eggs: 3 }] },
            { name: 'Clucky', layReports: [], productivity: [{ total_eggs: 0 }] },
          ],
        },
        {
          name: 'Coop B',
          hens: [{ name: 'Pecky', layReports: [{ eggs: 3 }], productivity: [{ total_eggs: 3 }] }],
        },
      ],
      farmOutput: [{ total_hens: 3 }],
    });
  });

  it('layReport → hen → coop → farm, upwards', async () => {
    const r = await gql(
      f.app,
      '/lay_report/graph',
      `{ getByHen(id: "${H0}") { eggs hen { name coop { name farm { name zone } } } } }`,
    );
    const up = { name: 'Henrietta', coop: { name: 'Coop A', farm: { name: 'Sunny Acres', zone: 'north' } } };
    expect(r.body.data.getByHen).toEqual([
      { eggs: 2, hen: up },
      { eggs: 1, hen: up },
    ]);
  });

  it('round trips in the unified schema: down and back up', async () => {
    const r = await gql(
      f.app,
      '/graphql',
      `{ farm(id: "${F0}") { coops { hens { layReports { hen { coop { farm { name } } } } } } } }`,
    );
    expect(r.body.errors).toBeUndefined();
    const names = r.body.data.farm.coops.flatMap((c: { hens: Array<{ layReports: unknown[] }> }) =>
      c.hens.flatMap((h) =>
        h.layReports.map((l) => (l as { hen: { coop: { farm: { name: string } } } }).hen.coop.farm.name),
      ),
    );
    expect(names).toEqual(['Sunny Acres', 'Sunny Acres', 'Sunny Acres']);
  });

  it('projections lead back to their entities and on to theirs', async () => {
    const r = await gql(
      f.app,
      '/graphql',
      `{ containerInventories(limit: 10) { current_eggs container { name inventory { utilization_pct } } } transfer: containerTransfer(id: "${ids.transfer}") { sourceContainer { zone } destContainer { zone } } }`,
    );
    expect(r.body.data).toEqual({
      containerInventories: [
        { current_eggs: 65, container: { name: 'Main Warehouse', inventory: [{ utilization_pct: 6.5 }] } },
        { current_eggs: 18, container: { name: 'Corner Shelf', inventory: [{ utilization_pct: 36 }] } },
      ],
      transfer: { sourceContainer: { zone: 'north' }, destContainer: { zone: 'south' } },
    });
  });

  it('resolves the same relation identically on the compiled (jit) path', async () => {
    const query = `{ getById(id: "${C2}") { farm { name } hens { name coop { name } } } }`;
    const first = await gql(f.app, '/coop/graph', query);
    for (let i = 0; i < 3; i++) expect((await gql(f.app, '/coop/graph', query)).body).toEqual(first.body);
    expect(first.body.data.getById).toEqual({
      farm: { name: 'Dale End' },
      hens: [{ name: 'Goldie', coop: { name: 'Coop C' } }],
    });
  });
});
