import type { EntityName } from '@eggmesh/schema';
import type { TypedLogEntry } from '../engine/entries.js';
import {
  type Change,
  countIn,
  type Documents,
  idIn,
  NO_EFFECTS,
  neg,
  type Payload,
} from '../engine/projection.js';
import { addCount, round4 } from '../engine/windows.js';
import type { InventoryDoc } from './document.js';

/** A change one storage event makes to one container's inventory. `eggs` may be negative: a retraction. */
export type InventoryEffect = {
  target: 'container_inventory';
  id: string;
  kind: 'deposit' | 'withdrawal' | 'transfer_in' | 'transfer_out' | 'consumed';
  eggs: number;
};

const effect = (id: string | null, kind: InventoryEffect['kind'], eggs: number): InventoryEffect[] =>
  id === null ? [] : [{ target: 'container_inventory', id, kind, eggs }];

/** The inventory effects of one event payload; a payload missing a field it needs yields nothing for that part. */
export function inventoryEffects(entity: EntityName, p: Payload): readonly InventoryEffect[] {
  const eggs = countIn(p, 'eggs');
  if (eggs === null) return NO_EFFECTS;
  switch (entity) {
    case 'storage_deposit':
      return effect(idIn(p, 'container_id'), 'deposit', eggs);
    case 'storage_withdrawal':
      return effect(idIn(p, 'container_id'), 'withdrawal', eggs);
    case 'consumption_report':
      return effect(idIn(p, 'container_id'), 'consumed', eggs);
    case 'container_transfer':
      return [
        ...effect(idIn(p, 'source_container_id'), 'transfer_out', eggs),
        ...effect(idIn(p, 'dest_container_id'), 'transfer_in', eggs),
      ];
    default:
      return NO_EFFECTS;
  }
}

/** The containers an entry names: a container itself, or the containers of a storage event. */
export function inventoryKeys(entry: TypedLogEntry): string[] {
  const ids: string[] = [];
  switch (entry.entity) {
    case 'container':
      ids.push(entry.id);
      break;
    case 'container_transfer':
      for (const p of [entry.previous, entry.payload]) {
        if (p?.source_container_id) ids.push(p.source_container_id);
        if (p?.dest_container_id) ids.push(p.dest_container_id);
      }
      break;
    case 'storage_deposit':
    case 'storage_withdrawal':
    case 'consumption_report':
      for (const p of [entry.previous, entry.payload]) if (p?.container_id) ids.push(p.container_id);
      break;
    default:
      break;
  }
  return ids;
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

/** The effect that exactly undoes `effect`. */
export const negateInventoryEffect = (e: InventoryEffect): InventoryEffect => ({ ...e, eggs: neg(e.eggs) });

/**
 * A storage event's effect moves the container's counts; a container written or deleted sets its
 * capacity (a delete keeps the last one) and whether the document is live.
 */
export function applyInventory(docs: Documents<InventoryDoc>, change: Change<InventoryEffect>): void {
  if (change.type === 'effect') {
    const { doc, live } = docs.get(change.effect.id);
    docs.put(change.effect.id, evolveInventory(doc, change.effect), live);
  } else if (change.type === 'actor' && change.entry.entity === 'container') {
    const { entry } = change;
    const live = entry.op !== 'delete';
    const { doc } = docs.get(entry.id);
    const capacity = live ? (entry.payload?.capacity ?? doc.capacity) : doc.capacity;
    docs.put(entry.id, withCapacity(doc, capacity), live);
  }
}
