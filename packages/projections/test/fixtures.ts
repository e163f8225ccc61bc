import type { EntityName } from '@eggmesh/schema';
import type { EffectSource } from '../src/index.js';

// Fixed v4 UUIDs for example-based tests.
export const C1 = '11111111-1111-4111-8111-111111111111';
export const C2 = '22222222-2222-4222-8222-222222222222';
export const HEN = '33333333-3333-4333-8333-333333333333';
export const FARM = '44444444-4444-4444-8444-444444444444';
export const COOP = '55555555-5555-4555-8555-555555555555';
export const CONSUMER = '66666666-6666-4666-8666-666666666666';
export const FARM2 = '77777777-7777-4777-8777-777777777777';

export const iso = (ms: number): string => new Date(ms).toISOString();

export const create = (entity: EntityName, payload: Record<string, unknown>): EffectSource => ({
  entity,
  op: 'create',
  payload,
  previous: null,
});

export const update = (
  entity: EntityName,
  previous: Record<string, unknown>,
  payload: Record<string, unknown>,
): EffectSource => ({ entity, op: 'update', payload, previous });

export const remove = (entity: EntityName, previous: Record<string, unknown>): EffectSource => ({
  entity,
  op: 'delete',
  payload: null,
  previous,
});

export const deposit = (container_id: string, eggs: number) => ({
  container_id,
  source_type: 'farm',
  source_id: FARM,
  eggs,
  timestamp: '2026-11-22T06:30:00Z',
});

export const withdrawal = (container_id: string, eggs: number) => ({
  container_id,
  reason: 'spoilage',
  eggs,
  timestamp: '2026-11-22T06:30:00Z',
});

export const transfer = (source_container_id: string, dest_container_id: string, eggs: number) => ({
  source_container_id,
  dest_container_id,
  eggs,
  timestamp: '2026-11-22T06:30:00Z',
  transport_method: 'van',
});

export const consumption = (container_id: string, eggs: number) => ({
  consumer_id: CONSUMER,
  container_id,
  eggs,
  timestamp: '2026-11-22T06:30:00Z',
  purpose: 'baking',
});

export const lay = (eggs: number, timestamp: string, quality?: string, hen_id = HEN, farm_id = FARM) => ({
  hen_id,
  coop_id: COOP,
  farm_id,
  eggs,
  timestamp,
  ...(quality === undefined ? {} : { quality }),
});
