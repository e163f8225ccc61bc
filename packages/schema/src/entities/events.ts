import { z } from 'zod';
import { idField, nonNegativeInt, positiveInt, timestamp, uuid } from '../primitives.js';

export const eggQualities = ['grade_a', 'grade_b', 'cracked', 'double_yolk'] as const;
export const depositSourceTypes = ['farm', 'transfer'] as const;
export const withdrawalReasons = ['spoilage', 'breakage', 'quality_check'] as const;
export const transportMethods = ['truck', 'van', 'cart'] as const;
export const consumptionPurposes = ['cooking', 'baking', 'resale', 'raw'] as const;

export const layReportSchema = z.strictObject({
  ...idField,
  hen_id: uuid(),
  coop_id: uuid(),
  farm_id: uuid(),
  eggs: nonNegativeInt(),
  timestamp: timestamp(),
  quality: z.enum(eggQualities).optional(),
});

export const storageDepositSchema = z.strictObject({
  ...idField,
  container_id: uuid(),
  source_type: z.enum(depositSourceTypes),
  source_id: uuid(),
  eggs: positiveInt(),
  timestamp: timestamp(),
});

export const storageWithdrawalSchema = z.strictObject({
  ...idField,
  container_id: uuid(),
  reason: z.enum(withdrawalReasons),
  eggs: positiveInt(),
  timestamp: timestamp(),
});

export const containerTransferSchema = z
  .strictObject({
    ...idField,
    source_container_id: uuid(),
    dest_container_id: uuid(),
    eggs: positiveInt(),
    timestamp: timestamp(),
    transport_method: z.enum(transportMethods).optional(),
  })
  .refine((t) => t.source_container_id !== t.dest_container_id, {
    message: 'a transfer needs two different containers',
    path: ['dest_container_id'],
  });

export const consumptionReportSchema = z.strictObject({
  ...idField,
  consumer_id: uuid(),
  container_id: uuid(),
  eggs: positiveInt(),
  timestamp: timestamp(),
  purpose: z.enum(consumptionPurposes).optional(),
});

export type LayReport = z.infer<typeof layReportSchema>;
export type StorageDeposit = z.infer<typeof storageDepositSchema>;
export type StorageWithdrawal = z.infer<typeof storageWithdrawalSchema>;
export type ContainerTransfer = z.infer<typeof containerTransferSchema>;
export type ConsumptionReport = z.infer<typeof consumptionReportSchema>;
