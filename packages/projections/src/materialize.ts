import type { ContainerInventory, FarmOutput, HenProductivity } from '@eggmesh/schema';
import { decodeFarmDoc, decodeHenDoc, decodeInventoryDoc } from './documents.js';
import type { InventoryDoc } from './inventory.js';
import type { FarmDoc, HenDoc } from './productivity.js';
import { dayOf, round4, windowSums } from './windows.js';

/** The projection entities, in catalogue order. */
export const projectionNames = ['container_inventory', 'hen_productivity', 'farm_output'] as const;

export type ProjectionName = (typeof projectionNames)[number];

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

/** The public hen_productivity document as of `ref` (epoch ms). */
export function materializeHen(doc: HenDoc, ref: number): HenProductivity {
  const w = windowSums(doc.days, ref);
  const rate = doc.total_eggs > 0 ? Math.min(1, doc.good_eggs / doc.total_eggs) : 0;
  return {
    id: doc.hen_id,
    hen_id: doc.hen_id,
    farm_id: doc.farm_id,
    eggs_today: w.today,
    eggs_week: w.week,
    eggs_month: w.month,
    total_eggs: doc.total_eggs,
    avg_per_week: round4(w.last28 / 4),
    quality_rate: round4(rate),
  };
}

/** The public farm_output document as of `ref` (epoch ms). */
export function materializeFarm(doc: FarmDoc, ref: number): FarmOutput {
  const w = windowSums(doc.days, ref);
  return {
    id: doc.farm_id,
    farm_id: doc.farm_id,
    farm_type: doc.farm_type,
    eggs_today: w.today,
    eggs_week: w.week,
    eggs_month: w.month,
    active_hens: doc.active_hens,
    total_hens: doc.total_hens,
    avg_per_hen_per_week: round4(w.last28 / 4 / Math.max(1, doc.active_hens)),
  };
}

/**
 * What a public document depends on of its reference time: the UTC day (the windows' only input).
 * Two reference times with the same key materialize every stored document alike.
 */
export const materializationKey = (ref: number): number => dayOf(ref);

/**
 * Turns a stored internal document into the public one as of `ref` (epoch ms).
 * Fields missing from `payload` (or mistyped) take their empty-document defaults.
 */
export function materialize(
  entity: ProjectionName,
  payload: Record<string, unknown>,
  ref: number,
): Record<string, unknown> {
  switch (entity) {
    case 'container_inventory':
      return materializeInventory(decodeInventoryDoc('', payload));
    case 'hen_productivity':
      return materializeHen(decodeHenDoc('', payload), ref);
    case 'farm_output':
      return materializeFarm(decodeFarmDoc('', payload), ref);
  }
}
