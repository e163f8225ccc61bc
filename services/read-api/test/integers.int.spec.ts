import { emptyInventory } from '@eggmesh/projections';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, fixture, gql, ids, seed, uuid } from './helpers.js';

/**
 * Out-of-range integers already stored (old data, written before the write side checked the range)
 * null their own field with a coded error; the rest of the response stands. Each query runs three
 * times: graphql-jit serializes differently once it has compiled the document.
 */
let f: Fixture;
const bigCoop = uuid(2, 100);
const bigContainer = uuid(5, 100);
const unsafeContainer = uuid(5, 101);

beforeAll(async () => {
  f = await fixture();
  await seed(f);
  // Straight through the store: the write-api's schema would refuse these.
  await f.write([
    {
      op: 'create',
      entity: 'coop',
      id: bigCoop,
      payload: { name: 'Huge', farm_id: ids.farm[0], capacity: 2_147_483_648, coop_type: 'barn' },
    },
  ]);
  await f.project([
    {
      entity: 'container_inventory',
      id: bigContainer,
      payload: { ...emptyInventory(bigContainer), current_eggs: 2_147_483_648, total_deposits: 2 ** 53 - 1 },
    },
    {
      entity: 'container_inventory',
      id: unsafeContainer,
      payload: { ...emptyInventory(unsafeContainer), current_eggs: 2 ** 53 + 2, total_deposits: 1.5 },
    },
  ]);
});
afterAll(async () => f.close());

async function thrice(path: string, query: string) {
  const out = [];
  for (let i = 0; i < 3; i++) out.push(await gql(f.app, path, query));
  return out;
}

describe('an Int field holding more than 32 bits', () => {
  it.each([
    ['/graphql', '{ coops { id name capacity } }', 'coops'],
    ['/coop/graph', '{ getAll { id name capacity } }', 'getAll'],
    ['/graphql', `{ farm(id: "${ids.farm[0]}") { name coops { id capacity } } }`, 'farm'],
  ])('%s %s: that field is null, the rest answers', async (path, query, root) => {
    for (const r of await thrice(path, query)) {
      expect(r.status).toBe(200);
      const rows = root === 'farm' ? r.body.data.farm.coops : r.body.data[root];
      expect(rows).toHaveLength(root === 'farm' ? 3 : 4);
      const big = rows.find((c: { id: string }) => c.id === bigCoop);
      expect(big.capacity).toBeNull();
      expect(rows.find((c: { id: string }) => c.id === ids.coop[0]).capacity).toBe(40);
      expect(r.body.errors).toHaveLength(1);
      expect(r.body.errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_BAD_VALUE');
      expect(r.body.errors[0].path.at(-1)).toBe('capacity');
    }
  });
});

describe('projection counters are SafeInt', () => {
  const q = '{ containerInventories { id current_eggs total_deposits } }';

  it('answers values beyond 32 bits exactly', async () => {
    for (const r of await thrice('/graphql', q)) {
      const row = r.body.data.containerInventories.find((c: { id: string }) => c.id === bigContainer);
      expect(row).toEqual({ id: bigContainer, current_eggs: 2_147_483_648, total_deposits: 2 ** 53 - 1 });
    }
  });

  it('nulls a value that is not a safe integer, with a coded error, and keeps the others', async () => {
    for (const r of await thrice('/graphql', q)) {
      expect(r.status).toBe(200);
      const rows = r.body.data.containerInventories;
      expect(rows).toHaveLength(4);
      expect(rows.find((c: { id: string }) => c.id === unsafeContainer)).toEqual({
        id: unsafeContainer,
        current_eggs: null,
        total_deposits: null,
      });
      expect(r.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual([
        'EGGMESH_GRAPHQL_BAD_VALUE',
        'EGGMESH_GRAPHQL_BAD_VALUE',
      ]);
    }
  });
});
