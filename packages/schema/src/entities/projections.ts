import { z } from 'zod';
import { nonNegativeInt, uuid } from '../primitives.js';

/** Projection documents as clients read them. The projector alone writes them. */
export const containerInventorySchema = z.strictObject({
  id: uuid(),
  container_id: uuid(),
  current_eggs: nonNegativeInt(),
  total_deposits: nonNegativeInt(),
  total_withdrawals: nonNegativeInt(),
  total_transfers_in: nonNegativeInt(),
  total_transfers_out: nonNegativeInt(),
  total_consumed: nonNegativeInt(),
  utilization_pct: z.number().min(0).max(100),
});

export const henProductivitySchema = z.strictObject({
  id: uuid(),
  hen_id: uuid(),
  farm_id: uuid().nullable(),
  eggs_today: nonNegativeInt(),
  eggs_week: nonNegativeInt(),
  eggs_month: nonNegativeInt(),
  total_eggs: nonNegativeInt(),
  avg_per_week: z.number().min(0),
  quality_rate: z.number().min(0).max(1),
});

export const farmOutputSchema = z.strictObject({
  id: uuid(),
  farm_id: uuid(),
  farm_type: z.string(),
  eggs_today: nonNegativeInt(),
  eggs_week: nonNegativeInt(),
  eggs_month: nonNegativeInt(),
  active_hens: nonNegativeInt(),
  total_hens: nonNegativeInt(),
  avg_per_hen_per_week: z.number().min(0),
});

export type ContainerInventory = z.infer<typeof containerInventorySchema>;
export type HenProductivity = z.infer<typeof henProductivitySchema>;
export type FarmOutput = z.infer<typeof farmOutputSchema>;
