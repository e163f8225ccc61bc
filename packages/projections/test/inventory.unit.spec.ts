import { describe, expect, it } from 'vitest';
import {
  effectsOf,
  emptyInventory,
  evolveInventory,
  type InventoryDoc,
  type InventoryEffect,
  utilizationOf,
  withCapacity,
} from '../src/index.js';
import { C1, C2, create, deposit, remove, transfer, update, withdrawal } from './fixtures.js';

const base: InventoryDoc = Object.freeze({
  container_id: C1,
  capacity: 1000,
  current_eggs: 100,
  total_deposits: 300,
  total_withdrawals: 50,
  total_transfers_in: 20,
  total_transfers_out: 70,
  total_consumed: 100,
  utilization_pct: 10,
});

const effect = (kind: InventoryEffect['kind'], eggs: number, id = C1): InventoryEffect => ({
  target: 'container_inventory',
  id,
  kind,
  eggs,
});

// Applies every inventory effect of the entries to a map of documents, in order.
function replay(docs: Map<string, InventoryDoc>, entries: Parameters<typeof effectsOf>[0][]): void {
  for (const entry of entries) {
    for (const e of effectsOf(entry)) {
      if (e.target !== 'container_inventory') continue;
      docs.set(e.id, evolveInventory(docs.get(e.id) ?? emptyInventory(e.id), e));
    }
  }
}

describe('emptyInventory', () => {
  it('is all zeros with unknown capacity', () => {
    expect(emptyInventory(C1)).toEqual({
      container_id: C1,
      capacity: null,
      current_eggs: 0,
      total_deposits: 0,
      total_withdrawals: 0,
      total_transfers_in: 0,
      total_transfers_out: 0,
      total_consumed: 0,
      utilization_pct: 0,
    });
  });
});

describe('evolveInventory', () => {
  it.each([
    ['deposit', 'total_deposits', +1],
    ['withdrawal', 'total_withdrawals', -1],
    ['transfer_in', 'total_transfers_in', +1],
    ['transfer_out', 'total_transfers_out', -1],
    ['consumed', 'total_consumed', -1],
  ] as const)('%s moves current_eggs and adds to %s', (kind, total, sign) => {
    const next = evolveInventory(base, effect(kind, 40));
    const current = base.current_eggs + sign * 40;
    expect(next).toEqual({
      ...base,
      current_eggs: current,
      [total]: base[total] + 40,
      // capacity 1000: current / 1000 × 100 = current / 10
      utilization_pct: current / 10,
    });
  });

  it('returns a new object and leaves the input untouched', () => {
    const before = { ...base };
    const next = evolveInventory(base, effect('deposit', 5));
    expect(next).not.toBe(base);
    expect(base).toEqual(before);
  });

  it('clamps current_eggs at 0, so a withdrawal before a deposit differs from one after', () => {
    const empty = emptyInventory(C1);
    const withdrawFirst = evolveInventory(
      evolveInventory(empty, effect('withdrawal', 30)),
      effect('deposit', 50),
    );
    const depositFirst = evolveInventory(
      evolveInventory(empty, effect('deposit', 50)),
      effect('withdrawal', 30),
    );
    expect(withdrawFirst.current_eggs).toBe(50);
    expect(depositFirst.current_eggs).toBe(50 - 30);
    // Totals record the events either way.
    expect(withdrawFirst.total_withdrawals).toBe(30);
    expect(depositFirst.total_withdrawals).toBe(30);
    expect(withdrawFirst.total_deposits).toBe(50);
  });

  it('clamps each outgoing kind at 0', () => {
    for (const kind of ['withdrawal', 'transfer_out', 'consumed'] as const) {
      expect(evolveInventory(base, effect(kind, base.current_eggs + 1)).current_eggs).toBe(0);
    }
  });

  it('flips signs for a retraction (negative eggs) and clamps totals at 0', () => {
    const undone = evolveInventory(base, effect('deposit', -10));
    expect(undone.current_eggs).toBe(base.current_eggs - 10);
    expect(undone.total_deposits).toBe(base.total_deposits - 10);

    const unwithdrawn = evolveInventory(base, effect('withdrawal', -10));
    expect(unwithdrawn.current_eggs).toBe(base.current_eggs + 10);
    expect(unwithdrawn.total_withdrawals).toBe(base.total_withdrawals - 10);

    const overRetracted = evolveInventory(emptyInventory(C1), effect('deposit', -10));
    expect(overRetracted.current_eggs).toBe(0);
    expect(overRetracted.total_deposits).toBe(0);
  });
});

describe('utilization', () => {
  it('is current / capacity × 100, capped at 100', () => {
    expect(utilizationOf(50, 200)).toBe(25);
    expect(utilizationOf(250, 200)).toBe(100);
    expect(utilizationOf(200, 200)).toBe(100);
  });

  it('is 0 when capacity is null or below 1', () => {
    expect(utilizationOf(50, null)).toBe(0);
    expect(utilizationOf(50, 0)).toBe(0);
    expect(utilizationOf(50, 0.5)).toBe(0);
  });

  it('rounds to 4 decimal places', () => {
    expect(utilizationOf(1, 3)).toBe(33.3333);
    expect(utilizationOf(2, 3)).toBe(66.6667);
  });

  it('is recomputed when capacity changes', () => {
    const doc = evolveInventory(emptyInventory(C1), effect('deposit', 60));
    expect(doc.utilization_pct).toBe(0);
    const sized = withCapacity(doc, 240);
    expect(sized.capacity).toBe(240);
    expect(sized.utilization_pct).toBe(25);
    expect(withCapacity(sized, 30).utilization_pct).toBe(100);
    expect(withCapacity(sized, null).utilization_pct).toBe(0);
    expect(sized.current_eggs).toBe(60);
  });

  it('follows current_eggs as effects apply', () => {
    const sized = withCapacity(emptyInventory(C1), 80);
    const filled = evolveInventory(sized, effect('deposit', 20));
    expect(filled.utilization_pct).toBe(25);
    expect(evolveInventory(filled, effect('deposit', 500)).utilization_pct).toBe(100);
  });
});

describe('inventory through effectsOf', () => {
  it('a transfer moves eggs out of the source and into the destination', () => {
    const docs = new Map<string, InventoryDoc>();
    replay(docs, [
      create('storage_deposit', deposit(C1, 100)),
      create('container_transfer', transfer(C1, C2, 35)),
    ]);
    expect(docs.get(C1)).toMatchObject({ current_eggs: 65, total_deposits: 100, total_transfers_out: 35 });
    expect(docs.get(C2)).toMatchObject({ current_eggs: 35, total_transfers_in: 35, total_deposits: 0 });
  });

  it('an update retracts the previous payload and applies the new one', () => {
    const docs = new Map<string, InventoryDoc>();
    replay(docs, [
      create('storage_deposit', deposit(C1, 100)),
      update('storage_deposit', deposit(C1, 100), deposit(C1, 40)),
    ]);
    expect(docs.get(C1)).toMatchObject({ current_eggs: 40, total_deposits: 40 });
  });

  it('an update that changes the container moves the eggs between containers', () => {
    const docs = new Map<string, InventoryDoc>();
    replay(docs, [
      create('storage_deposit', deposit(C1, 100)),
      update('storage_deposit', deposit(C1, 100), deposit(C2, 100)),
    ]);
    expect(docs.get(C1)).toMatchObject({ current_eggs: 0, total_deposits: 0 });
    expect(docs.get(C2)).toMatchObject({ current_eggs: 100, total_deposits: 100 });
  });

  it('a delete retracts the event', () => {
    const docs = new Map<string, InventoryDoc>();
    replay(docs, [
      create('storage_deposit', deposit(C1, 100)),
      create('storage_withdrawal', withdrawal(C1, 30)),
      create('container_transfer', transfer(C1, C2, 20)),
    ]);
    expect(docs.get(C1)?.current_eggs).toBe(100 - 30 - 20);
    replay(docs, [
      remove('storage_withdrawal', withdrawal(C1, 30)),
      remove('container_transfer', transfer(C1, C2, 20)),
    ]);
    expect(docs.get(C1)).toMatchObject({
      current_eggs: 100,
      total_withdrawals: 0,
      total_transfers_out: 0,
    });
    expect(docs.get(C2)).toMatchObject({ current_eggs: 0, total_transfers_in: 0 });
  });

  it('clamping is not undone by a later retraction (log order decides)', () => {
    const docs = new Map<string, InventoryDoc>();
    // The withdrawal arrives before any deposit: it is clamped, and retracting it later adds eggs back.
    replay(docs, [
      create('storage_withdrawal', withdrawal(C1, 30)),
      create('storage_deposit', deposit(C1, 50)),
      remove('storage_withdrawal', withdrawal(C1, 30)),
    ]);
    expect(docs.get(C1)).toMatchObject({ current_eggs: 50 + 30, total_withdrawals: 0, total_deposits: 50 });
  });
});
