import type { HenProductivity } from '@eggmesh/schema';
import { finiteOr, type Payload, textOr, textOrNull } from '../engine/projection.js';
import { type DayCounts, dayCountsOf, NO_DAYS, round4, windowSums } from '../engine/windows.js';

/** The hen_productivity document the projector keeps. `days`: eggs laid per UTC day. */
export type HenDoc = {
  hen_id: string;
  farm_id: string | null;
  total_eggs: number;
  good_eggs: number;
  days: DayCounts;
};

/** A zeroed hen document with no farm. */
export function emptyHen(henId: string): HenDoc {
  return { hen_id: henId, farm_id: null, total_eggs: 0, good_eggs: 0, days: NO_DAYS };
}

/** A stored hen_productivity document; missing or mistyped fields take the empty document's values. */
export function decodeHenDoc(id: string, p: Payload): HenDoc {
  const empty = emptyHen(textOr(p.hen_id, id));
  return {
    hen_id: empty.hen_id,
    farm_id: textOrNull(p.farm_id),
    total_eggs: finiteOr(p.total_eggs, 0),
    good_eggs: finiteOr(p.good_eggs, 0),
    days: dayCountsOf(p.days),
  };
}

/** The public hen_productivity document as of `ref` (epoch ms). */
export function materializeHen(doc: HenDoc, ref: number): HenProductivity {
  const w = windowSums(doc.days, ref);
  const rate = doc.total_eggs > 0 ? Math.min(1, doc.good_eggs / doc.total_eggs) : 0;
  return {
    id: doc.hen_id,
    hen_id: doc.hen_id,
    farm_id: doc.farm_id,
    eggs_today: w.today,
    eggs_week: w.week,
    eggs_month: w.month,
    total_eggs: doc.total_eggs,
    avg_per_week: round4(w.last28 / 4),
    quality_rate: round4(rate),
  };
}
