import type { FarmOutput } from '@eggmesh/schema';
import { finiteOr, type Payload, textOr } from '../engine/projection.js';
import { type DayCounts, dayCountsOf, NO_DAYS, round4, windowSums } from '../engine/windows.js';

/** The farm_output document the projector keeps. `days`: eggs reported per UTC day. */
export type FarmDoc = {
  farm_id: string;
  farm_type: string;
  active_hens: number;
  total_hens: number;
  days: DayCounts;
};

/** A zeroed farm document with an empty farm type. */
export function emptyFarm(farmId: string): FarmDoc {
  return { farm_id: farmId, farm_type: '', active_hens: 0, total_hens: 0, days: NO_DAYS };
}

/** A stored farm_output document; missing or mistyped fields take the empty document's values. */
export function decodeFarmDoc(id: string, p: Payload): FarmDoc {
  const empty = emptyFarm(textOr(p.farm_id, id));
  return {
    farm_id: empty.farm_id,
    farm_type: textOr(p.farm_type, empty.farm_type),
    active_hens: finiteOr(p.active_hens, 0),
    total_hens: finiteOr(p.total_hens, 0),
    days: dayCountsOf(p.days),
  };
}

/** The public farm_output document as of `ref` (epoch ms). */
export function materializeFarm(doc: FarmDoc, ref: number): FarmOutput {
  const w = windowSums(doc.days, ref);
  return {
    id: doc.farm_id,
    farm_id: doc.farm_id,
    farm_type: doc.farm_type,
    eggs_today: w.today,
    eggs_week: w.week,
    eggs_month: w.month,
    active_hens: doc.active_hens,
    total_hens: doc.total_hens,
    avg_per_hen_per_week: round4(w.last28 / 4 / Math.max(1, doc.active_hens)),
  };
}
