import type { ContainerInventory } from '@eggmesh/schema';
import { finiteOr, type Payload, textOr } from '../engine/projection.js';

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

/** A stored container_inventory document; missing or mistyped fields take the empty document's values. */
export function decodeInventoryDoc(id: string, p: Payload): InventoryDoc {
  const empty = emptyInventory(textOr(p.container_id, id));
  return {
    container_id: empty.container_id,
    capacity: typeof p.capacity === 'number' && Number.isFinite(p.capacity) ? p.capacity : null,
    current_eggs: finiteOr(p.current_eggs, 0),
    total_deposits: finiteOr(p.total_deposits, 0),
    total_withdrawals: finiteOr(p.total_withdrawals, 0),
    total_transfers_in: finiteOr(p.total_transfers_in, 0),
    total_transfers_out: finiteOr(p.total_transfers_out, 0),
    total_consumed: finiteOr(p.total_consumed, 0),
    utilization_pct: finiteOr(p.utilization_pct, 0),
  };
}

/** The public container_inventory document (capacity is internal). */
export function materializeInventory(doc: InventoryDoc): ContainerInventory {
  return {
    id: doc.container_id,
    container_id: doc.container_id,
    current_eggs: doc.current_eggs,
    total_deposits: doc.total_deposits,
    total_withdrawals: doc.total_withdrawals,
    total_transfers_in: doc.total_transfers_in,
    total_transfers_out: doc.total_transfers_out,
    total_consumed: doc.total_consumed,
    utilization_pct: doc.utilization_pct,
  };
}
