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
import { addDay, dayOfTimestamp } from '../engine/windows.js';
import type { FarmDoc } from './document.js';

/** A change one lay report makes to its own farm's document. `eggs` may be negative: a retraction. */
export type FarmEffect = { target: 'farm_output'; id: string; eggs: number; day: number };

/** The farm effect of one event payload: a lay report with its eggs, farm and a parseable timestamp. */
export function farmEffects(entity: EntityName, p: Payload): readonly FarmEffect[] {
  if (entity !== 'lay_report') return NO_EFFECTS;
  const eggs = countIn(p, 'eggs');
  const day = dayOfTimestamp(idIn(p, 'timestamp'));
  const id = idIn(p, 'farm_id');
  if (eggs === null || day === null || id === null) return NO_EFFECTS;
  return [{ target: 'farm_output', id, eggs, day }];
}

/** The farms an entry names: a farm itself, a coop's farm, or the farms of a lay report. */
export function farmKeys(entry: TypedLogEntry): string[] {
  switch (entry.entity) {
    case 'farm':
      return [entry.id];
    case 'coop':
      return entry.payload?.farm_id ? [entry.payload.farm_id] : [];
    case 'lay_report': {
      const ids: string[] = [];
      for (const p of [entry.previous, entry.payload]) if (p?.farm_id) ids.push(p.farm_id);
      return ids;
    }
    default:
      return [];
  }
}

/** The effect that exactly undoes `effect`. */
export const negateFarmEffect = (e: FarmEffect): FarmEffect => ({ ...e, eggs: neg(e.eggs) });

/** Applies one lay effect (written at `createdAt`) and returns a new document. */
export function evolveFarm(doc: FarmDoc, effect: FarmEffect, createdAt: number): FarmDoc {
  return { ...doc, days: addDay(doc.days, effect.day, effect.eggs, createdAt) };
}

/**
 * A lay report's effect counts its eggs; the farm written or deleted sets its type (a delete keeps
 * the last one) and whether the document is live; hens move its hen counts (never below 0).
 */
export function applyFarm(docs: Documents<FarmDoc>, change: Change<FarmEffect>): void {
  switch (change.type) {
    case 'effect': {
      const { doc, live } = docs.get(change.effect.id);
      docs.put(change.effect.id, evolveFarm(doc, change.effect, docs.at), live);
      return;
    }
    case 'actor': {
      const { entry } = change;
      if (entry.entity !== 'farm') return;
      const { doc } = docs.get(entry.id);
      const farm_type = entry.payload?.farm_type ?? doc.farm_type;
      docs.put(entry.id, { ...doc, farm_type }, entry.op !== 'delete');
      return;
    }
    case 'farm_hens': {
      const { doc, live } = docs.get(change.farm_id);
      const next = {
        ...doc,
        total_hens: Math.max(0, doc.total_hens + change.hens),
        active_hens: Math.max(0, doc.active_hens + change.active),
      };
      docs.put(change.farm_id, next, live);
      return;
    }
    default:
      return;
  }
}
