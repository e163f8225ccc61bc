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
import { addCount, addDay, dayOfTimestamp } from '../engine/windows.js';
import type { HenDoc } from './document.js';

/** A change one lay report makes to its hen's document. `eggs` may be negative: a retraction. */
export type HenEffect = {
  target: 'hen_productivity';
  id: string;
  eggs: number;
  goodEggs: number;
  day: number;
};

// A missing quality counts as grade_a.
const isGood = (quality: unknown): boolean =>
  quality === undefined || quality === null || quality === 'grade_a' || quality === 'double_yolk';

/** The hen effect of one event payload: a lay report with its eggs, hen and a parseable timestamp. */
export function henEffects(entity: EntityName, p: Payload): readonly HenEffect[] {
  if (entity !== 'lay_report') return NO_EFFECTS;
  const eggs = countIn(p, 'eggs');
  const day = dayOfTimestamp(idIn(p, 'timestamp'));
  const id = idIn(p, 'hen_id');
  if (eggs === null || day === null || id === null) return NO_EFFECTS;
  return [{ target: 'hen_productivity', id, eggs, goodEggs: isGood(p.quality) ? eggs : 0, day }];
}

/** The hens an entry names: a hen itself, or the hens of a lay report. */
export function henKeys(entry: TypedLogEntry): string[] {
  if (entry.entity === 'hen') return [entry.id];
  const ids: string[] = [];
  if (entry.entity === 'lay_report')
    for (const p of [entry.previous, entry.payload]) if (p?.hen_id) ids.push(p.hen_id);
  return ids;
}

/** The effect that exactly undoes `effect`. */
export const negateHenEffect = (e: HenEffect): HenEffect => ({
  ...e,
  eggs: neg(e.eggs),
  goodEggs: neg(e.goodEggs),
});

/** Applies one lay effect (written at `createdAt`) and returns a new document. */
export function evolveHen(doc: HenDoc, effect: HenEffect, createdAt: number): HenDoc {
  return {
    ...doc,
    total_eggs: addCount(doc.total_eggs, effect.eggs),
    good_eggs: addCount(doc.good_eggs, effect.goodEggs),
    days: addDay(doc.days, effect.day, effect.eggs, createdAt),
  };
}

/**
 * A lay report's effect counts its eggs; the hen's farm follows the live coop it is in (a hen
 * written or deleted also sets whether the document is live).
 */
export function applyHen(docs: Documents<HenDoc>, change: Change<HenEffect>): void {
  switch (change.type) {
    case 'effect': {
      const { doc, live } = docs.get(change.effect.id);
      docs.put(change.effect.id, evolveHen(doc, change.effect, docs.at), live);
      return;
    }
    case 'hen_farm': {
      const { doc, live } = docs.get(change.hen_id);
      if (doc.farm_id !== change.farm_id) docs.put(change.hen_id, { ...doc, farm_id: change.farm_id }, live);
      return;
    }
    case 'hen_written': {
      const { doc } = docs.get(change.hen_id);
      docs.put(change.hen_id, { ...doc, farm_id: change.farm_id }, change.live);
      return;
    }
    default:
      return;
  }
}
