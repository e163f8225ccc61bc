import type { FarmEffect, HenEffect } from './effects.js';
import { addCount, addDay, type DayCounts, NO_DAYS } from './windows.js';

/** The hen_productivity document the projector keeps. `days`: eggs laid per UTC day. */
export type HenDoc = {
  hen_id: string;
  farm_id: string | null;
  total_eggs: number;
  good_eggs: number;
  days: DayCounts;
};

/** The farm_output document the projector keeps. `days`: eggs reported per UTC day. */
export type FarmDoc = {
  farm_id: string;
  farm_type: string;
  active_hens: number;
  total_hens: number;
  days: DayCounts;
};

/** A zeroed hen document with no farm. */
export function emptyHen(henId: string): HenDoc {
  return { hen_id: henId, farm_id: null, total_eggs: 0, good_eggs: 0, days: NO_DAYS };
}

/** A zeroed farm document with an empty farm type. */
export function emptyFarm(farmId: string): FarmDoc {
  return { farm_id: farmId, farm_type: '', active_hens: 0, total_hens: 0, days: NO_DAYS };
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
