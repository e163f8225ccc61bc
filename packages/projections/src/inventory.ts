import type { InventoryEffect } from './effects.js';
import { addCount, round4 } from './windows.js';

/** The container_inventory document the projector stores. */
export type InventoryDoc = {
  container_id: string;
  capacity: number | null;
  current_eggs: number;
  total_deposits: number;
  total_withdrawals: number;
  total_transfers_in: number;
  total_transfers_out: number;
  total_consumed: number;
  utilization_pct: number;
};

/** A zeroed inventory with unknown capacity. */
export function emptyInventory(containerId: string): InventoryDoc {
  return {
    container_id: containerId,
    capacity: null,
    current_eggs: 0,
    total_deposits: 0,
    total_withdrawals: 0,
    total_transfers_in: 0,
    total_transfers_out: 0,
    total_consumed: 0,
    utilization_pct: 0,
  };
}

/** `min(100, current / capacity × 100)` rounded to 4 decimals; 0 when capacity is null or below 1. */
export function utilizationOf(current: number, capacity: number | null): number {
  if (capacity === null || !(capacity >= 1)) return 0;
  return round4(Math.min(100, (current / capacity) * 100));
}

type Total =
  | 'total_deposits'
  | 'total_withdrawals'
  | 'total_transfers_in'
  | 'total_transfers_out'
  | 'total_consumed';

// Which total each kind feeds and which way it moves current_eggs.
const rules: Record<InventoryEffect['kind'], { total: Total; sign: 1 | -1 }> = {
  deposit: { total: 'total_deposits', sign: 1 },
  withdrawal: { total: 'total_withdrawals', sign: -1 },
  transfer_in: { total: 'total_transfers_in', sign: 1 },
  transfer_out: { total: 'total_transfers_out', sign: -1 },
  consumed: { total: 'total_consumed', sign: -1 },
};

/**
 * Applies one effect and returns a new document. `current_eggs` and the totals are clamped at 0
 * after the step (and saturate at MAX_COUNT), so order matters and clamping is not undone by a later retraction.
 */
export function evolveInventory(doc: InventoryDoc, effect: InventoryEffect): InventoryDoc {
  const { total, sign } = rules[effect.kind];
  const current_eggs = addCount(doc.current_eggs, sign * effect.eggs);
  return {
    ...doc,
    current_eggs,
    [total]: addCount(doc[total], effect.eggs),
    utilization_pct: utilizationOf(current_eggs, doc.capacity),
  };
}

/** Sets the container's capacity and recomputes utilization. */
export function withCapacity(doc: InventoryDoc, capacity: number | null): InventoryDoc {
  return { ...doc, capacity, utilization_pct: utilizationOf(doc.current_eggs, capacity) };
}
