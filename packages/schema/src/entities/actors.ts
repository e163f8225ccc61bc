import { z } from 'zod';
import { birthDate, idField, label, nonNegativeInt, positiveInt, text, uuid } from '../primitives.js';

export const farmTypes = ['megafarm', 'local_farm', 'homestead'] as const;
export const henStatuses = ['active', 'retired', 'deceased'] as const;
export const containerTypes = ['warehouse', 'market_shelf', 'fridge'] as const;
export const consumerTypes = ['household', 'restaurant', 'bakery'] as const;

export const farmSchema = z.strictObject({
  ...idField,
  name: label(),
  farm_type: z.enum(farmTypes),
  zone: label(),
  owner: text().optional(),
});

export const coopSchema = z.strictObject({
  ...idField,
  name: label(),
  farm_id: uuid(),
  capacity: positiveInt(),
  coop_type: label(),
});

export const henSchema = z.strictObject({
  ...idField,
  name: label(),
  coop_id: uuid(),
  breed: label(),
  dob: birthDate().optional(),
  status: z.enum(henStatuses).optional(),
});

export const containerSchema = z.strictObject({
  ...idField,
  name: label(),
  container_type: z.enum(containerTypes),
  capacity: positiveInt(),
  zone: label(),
});

export const consumerSchema = z.strictObject({
  ...idField,
  name: label(),
  consumer_type: z.enum(consumerTypes),
  zone: label(),
  weekly_demand: nonNegativeInt().optional(),
});

export type Farm = z.infer<typeof farmSchema>;
export type Coop = z.infer<typeof coopSchema>;
export type Hen = z.infer<typeof henSchema>;
export type Container = z.infer<typeof containerSchema>;
export type Consumer = z.infer<typeof consumerSchema>;
