import { z } from 'zod';
import { counter, uuid } from '../primitives.js';

/** Projection documents as clients read them. The projector alone writes them. */
export const containerInventorySchema = z.strictObject({
  id: uuid(),
  container_id: uuid(),
  current_eggs: counter(),
  total_deposits: counter(),
  total_withdrawals: counter(),
  total_transfers_in: counter(),
  total_transfers_out: counter(),
  total_consumed: counter(),
  utilization_pct: z.number().min(0).max(100),
});

export const henProductivitySchema = z.strictObject({
  id: uuid(),
  hen_id: uuid(),
  farm_id: uuid().nullable(),
  eggs_today: counter(),
  eggs_week: counter(),
  eggs_month: counter(),
  total_eggs: counter(),
  avg_per_week: z.number().min(0),
  quality_rate: z.number().min(0).max(1),
});

export const farmOutputSchema = z.strictObject({
  id: uuid(),
  farm_id: uuid(),
  farm_type: z.string(),
  eggs_today: counter(),
  eggs_week: counter(),
  eggs_month: counter(),
  active_hens: counter(),
  total_hens: counter(),
  avg_per_hen_per_week: z.number().min(0),
});

export type ContainerInventory = z.infer<typeof containerInventorySchema>;
export type HenProductivity = z.infer<typeof henProductivitySchema>;
export type FarmOutput = z.infer<typeof farmOutputSchema>;
