import type { EntityName } from '@eggmesh/schema';
import { dayOf } from './windows.js';

/** A change a single event applies to one projection document. `eggs` may be negative: a retraction. */
export type Effect =
  | {
      target: 'container_inventory';
      id: string;
      kind: 'deposit' | 'withdrawal' | 'transfer_in' | 'transfer_out' | 'consumed';
      eggs: number;
    }
  | { target: 'hen_productivity'; id: string; eggs: number; goodEggs: number; day: number }
  | { target: 'farm_output'; id: string; eggs: number; day: number };

export type InventoryEffect = Extract<Effect, { target: 'container_inventory' }>;
export type HenEffect = Extract<Effect, { target: 'hen_productivity' }>;
export type FarmEffect = Extract<Effect, { target: 'farm_output' }>;

/** The fields of a store `LogEntry` that determine its effects (structurally a `Pick<LogEntry, ...>`). */
export interface EffectSource {
  readonly entity: EntityName;
  readonly op: 'create' | 'update' | 'delete';
  readonly payload: Record<string, unknown> | null;
  readonly previous: Record<string, unknown> | null;
}

type Payload = Record<string, unknown>;

const str = (p: Payload, key: string): string | null => {
  const v = p[key];
  return typeof v === 'string' && v !== '' ? v : null;
};

const count = (p: Payload, key: string): number | null => {
  const v = p[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

// A missing quality counts as grade_a.
const isGood = (quality: unknown): boolean =>
  quality === undefined || quality === null || quality === 'grade_a' || quality === 'double_yolk';

const inventory = (id: string | null, kind: InventoryEffect['kind'], eggs: number): Effect[] =>
  id === null ? [] : [{ target: 'container_inventory', id, kind, eggs }];

// Effects of one event payload; a payload missing a field it needs yields nothing for that part.
function payloadEffects(entity: EntityName, p: Payload): Effect[] {
  const eggs = count(p, 'eggs');
  if (eggs === null) return [];
  switch (entity) {
    case 'storage_deposit':
      return inventory(str(p, 'container_id'), 'deposit', eggs);
    case 'storage_withdrawal':
      return inventory(str(p, 'container_id'), 'withdrawal', eggs);
    case 'consumption_report':
      return inventory(str(p, 'container_id'), 'consumed', eggs);
    case 'container_transfer':
      return [
        ...inventory(str(p, 'source_container_id'), 'transfer_out', eggs),
        ...inventory(str(p, 'dest_container_id'), 'transfer_in', eggs),
      ];
    case 'lay_report': {
      const ts = str(p, 'timestamp');
      const ms = ts === null ? Number.NaN : Date.parse(ts);
      if (!Number.isFinite(ms)) return [];
      const day = dayOf(ms);
      const henId = str(p, 'hen_id');
      const farmId = str(p, 'farm_id');
      const out: Effect[] = [];
      if (henId !== null) {
        out.push({
          target: 'hen_productivity',
          id: henId,
          eggs,
          goodEggs: isGood(p.quality) ? eggs : 0,
          day,
        });
      }
      if (farmId !== null) out.push({ target: 'farm_output', id: farmId, eggs, day });
      return out;
    }
    default:
      return [];
  }
}

// Avoids -0, which deep equality tells apart from 0.
const neg = (n: number): number => (n === 0 ? 0 : -n);

/** The effect that exactly undoes `effect`. */
export function negateEffect(effect: Effect): Effect {
  if (effect.target === 'hen_productivity') {
    return { ...effect, eggs: neg(effect.eggs), goodEggs: neg(effect.goodEggs) };
  }
  return { ...effect, eggs: neg(effect.eggs) };
}

/**
 * The projection effects of one log entry: the negated effects of `previous` (if any) followed by
 * the effects of `payload` (if any). Only the five event entities have effects.
 */
export function effectsOf(entry: EffectSource): Effect[] {
  const undone =
    entry.previous === null ? [] : payloadEffects(entry.entity, entry.previous).map(negateEffect);
  const done = entry.payload === null ? [] : payloadEffects(entry.entity, entry.payload);
  return [...undone, ...done];
}
