import {
  containerInventorySchema,
  entities,
  entityNames,
  farmOutputSchema,
  henProductivitySchema,
} from '@eggmesh/schema';
import { describe, expect, it } from 'vitest';
import {
  type DocOf,
  dayCountsOf,
  documentJson,
  emptyFarm,
  emptyHen,
  emptyInventory,
  type FarmDoc,
  type HenDoc,
  type InventoryDoc,
  materialize,
  materializeFarm,
  materializeHen,
  materializeInventory,
  type ProjectionName,
  projectionNames,
  storedDocument,
} from '../src/index.js';
import { C1, FARM, HEN } from './fixtures.js';

const REF = Date.UTC(2026, 10, 22, 12);
const today = Date.UTC(2026, 10, 22) / 86_400_000;

const inventory: InventoryDoc = {
  container_id: C1,
  capacity: 400,
  current_eggs: 100,
  total_deposits: 150,
  total_withdrawals: 10,
  total_transfers_in: 5,
  total_transfers_out: 20,
  total_consumed: 25,
  utilization_pct: 25,
};

const hen: HenDoc = {
  hen_id: HEN,
  farm_id: FARM,
  total_eggs: 50,
  good_eggs: 40,
  days: dayCountsOf({ [today]: 2, [today - 3]: 5, [today - 10]: 7, [today - 40]: 36 }),
};

const farm: FarmDoc = {
  farm_id: FARM,
  farm_type: 'free_range',
  active_hens: 2,
  total_hens: 3,
  days: dayCountsOf({ [today]: 4, [today - 20]: 8 }),
};

describe('materialize', () => {
  it('projectionNames are the catalogue projections', () => {
    expect([...projectionNames].sort()).toEqual(
      entityNames.filter((n) => entities[n].kind === 'projection').sort(),
    );
  });

  it('inventory: id is the container id and capacity is dropped', () => {
    const doc = materializeInventory(inventory);
    const { capacity: _capacity, ...rest } = inventory;
    expect(doc).toEqual({ id: C1, ...rest });
    expect(containerInventorySchema.parse(doc)).toEqual(doc);
  });

  it('hen: windows, average and quality rate', () => {
    const doc = materializeHen(hen, REF);
    expect(doc).toEqual({
      id: HEN,
      hen_id: HEN,
      farm_id: FARM,
      eggs_today: 2,
      eggs_week: 2 + 5,
      eggs_month: 2 + 5 + 7,
      total_eggs: 50,
      avg_per_week: (2 + 5 + 7) / 4,
      quality_rate: 40 / 50,
    });
    expect(henProductivitySchema.parse(doc)).toEqual(doc);
    expect(henProductivitySchema.parse(materializeHen(emptyHen(HEN), REF)).farm_id).toBeNull();
  });

  it('farm: windows and average per active hen', () => {
    const doc = materializeFarm(farm, REF);
    expect(doc).toEqual({
      id: FARM,
      farm_id: FARM,
      farm_type: 'free_range',
      eggs_today: 4,
      eggs_week: 4,
      eggs_month: 12,
      active_hens: 2,
      total_hens: 3,
      avg_per_hen_per_week: 12 / 4 / 2,
    });
    expect(farmOutputSchema.parse(doc)).toEqual(doc);
    // No active hens: divide by 1.
    expect(materializeFarm({ ...farm, active_hens: 0 }, REF).avg_per_hen_per_week).toBe(12 / 4);
  });

  it('dispatches on the entity and reads JSON round-tripped documents', () => {
    const stored = (doc: DocOf[ProjectionName]) => JSON.parse(documentJson(doc)) as Record<string, unknown>;
    expect(materialize('container_inventory', stored(inventory), REF)).toEqual(
      materializeInventory(inventory),
    );
    expect(materialize('hen_productivity', stored(hen), REF)).toEqual(materializeHen(hen, REF));
    expect(materialize('farm_output', stored(farm), REF)).toEqual(materializeFarm(farm, REF));
  });

  it('the id equals the projection key of the catalogue', () => {
    const docs = {
      container_inventory: materialize('container_inventory', { ...emptyInventory(C1) }, REF),
      hen_productivity: materialize('hen_productivity', storedDocument(emptyHen(HEN)), REF),
      farm_output: materialize('farm_output', storedDocument(emptyFarm(FARM)), REF),
    };
    for (const name of projectionNames) {
      const key = entities[name].projectionKey;
      expect(key).toBeDefined();
      expect(docs[name].id).toBe(docs[name][key ?? '']);
      expect(entities[name].schema.safeParse(docs[name]).success).toBe(true);
    }
  });

  it('fills fields missing from a stored document with empty defaults', () => {
    const doc = materialize('farm_output', { farm_id: FARM, farm_type: 'organic' }, REF);
    expect(doc).toEqual({ ...materializeFarm(emptyFarm(FARM), REF), farm_type: 'organic' });
  });
});
