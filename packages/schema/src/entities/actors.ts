import { z } from 'zod';
import { date, idField, nonNegativeInt, positiveInt, uuid } from '../primitives.js';

export const farmTypes = ['megafarm', 'local_farm', 'homestead'] as const;
export const henStatuses = ['active', 'retired', 'deceased'] as const;
export const containerTypes = ['warehouse', 'market_shelf', 'fridge'] as const;
export const consumerTypes = ['household', 'restaurant', 'bakery'] as const;

export const farmSchema = z.strictObject({
  ...idField,
  name: z.string().min(1),
  farm_type: z.enum(farmTypes),
  zone: z.string().min(1),
  owner: z.string().optional(),
});

export const coopSchema = z.strictObject({
  ...idField,
  name: z.string().min(1),
  farm_id: uuid(),
  capacity: positiveInt(),
  coop_type: z.string().min(1),
});

export const henSchema = z.strictObject({
  ...idField,
  name: z.string().min(1),
  coop_id: uuid(),
  breed: z.string().min(1),
  dob: date().optional(),
  status: z.enum(henStatuses).optional(),
});

export const containerSchema = z.strictObject({
  ...idField,
  name: z.string().min(1),
  container_type: z.enum(containerTypes),
  capacity: positiveInt(),
  zone: z.string().min(1),
});

export const consumerSchema = z.strictObject({
  ...idField,
  name: z.string().min(1),
  consumer_type: z.enum(consumerTypes),
  zone: z.string().min(1),
  weekly_demand: nonNegativeInt().optional(),
});

export type Farm = z.infer<typeof farmSchema>;
export type Coop = z.infer<typeof coopSchema>;
export type Hen = z.infer<typeof henSchema>;
export type Container = z.infer<typeof containerSchema>;
export type Consumer = z.infer<typeof consumerSchema>;
