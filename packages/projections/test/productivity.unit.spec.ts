import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  dayOf,
  effectsOf,
  emptyFarm,
  emptyHen,
  evolveFarm,
  evolveHen,
  type FarmDoc,
  type HenDoc,
  materializeFarm,
  materializeHen,
  pruneDays,
  windowSums,
} from '../src/index.js';
import { create, FARM, HEN, iso, lay, remove, update } from './fixtures.js';

// 2026-11-22T12:00:00Z and calendar helpers built from Date.UTC, independent of dayOf.
const at = (d: number, h = 12, min = 0, s = 0, ms = 0) => Date.UTC(2026, 10, d, h, min, s, ms);
const REF = at(22);

type Report = ReturnType<typeof lay>;

// Replays lay report entries into hen and farm documents, as the projector would.
function replay(entries: Parameters<typeof effectsOf>[0][], createdAt: number) {
  let hen: HenDoc = emptyHen(HEN);
  let farm: FarmDoc = emptyFarm(FARM);
  for (const entry of entries) {
    for (const e of effectsOf(entry)) {
      if (e.target === 'hen_productivity') hen = evolveHen(hen, e, createdAt);
      if (e.target === 'farm_output') farm = evolveFarm(farm, e, createdAt);
    }
  }
  return { hen, farm };
}

const reports = (...rs: Report[]) => rs.map((r) => create('lay_report', r));

describe('evolveHen / evolveFarm', () => {
  it('start empty', () => {
    expect(emptyHen(HEN)).toEqual({ hen_id: HEN, farm_id: null, total_eggs: 0, good_eggs: 0, days: [] });
    expect(emptyFarm(FARM)).toEqual({
      farm_id: FARM,
      farm_type: '',
      active_hens: 0,
      total_hens: 0,
      days: [],
    });
  });

  it('sum eggs per UTC day and in total', () => {
    const { hen, farm } = replay(
      reports(lay(3, iso(at(21, 8))), lay(4, iso(at(22, 7))), lay(5, iso(at(22, 9)), 'cracked')),
      REF,
    );
    const d21 = Date.UTC(2026, 10, 21) / DAY_MS;
    const d22 = Date.UTC(2026, 10, 22) / DAY_MS;
    expect(hen.days).toEqual([d21, 3, d22, 9]);
    expect(hen.total_eggs).toBe(12);
    expect(hen.good_eggs).toBe(7);
    expect(farm.days).toEqual([d21, 3, d22, 9]);
  });

  it('do not mutate their input', () => {
    const hen = emptyHen(HEN);
    const next = evolveHen(
      hen,
      { target: 'hen_productivity', id: HEN, eggs: 2, goodEggs: 2, day: 5 },
      5 * DAY_MS,
    );
    expect(hen).toEqual(emptyHen(HEN));
    expect(next.days).toEqual([5, 2]);
  });

  it('drop a day that a retraction empties, and a zero-egg report adds no day', () => {
    const r = lay(6, iso(at(20)));
    const { hen, farm } = replay([create('lay_report', r), remove('lay_report', r)], REF);
    expect(hen).toEqual(emptyHen(HEN));
    expect(farm).toEqual(emptyFarm(FARM));
    expect(replay(reports(lay(0, iso(at(20)))), REF).hen.days).toEqual([]);
  });

  it('move eggs between days on an update', () => {
    const before = lay(6, iso(at(20)));
    const after = lay(6, iso(at(21)));
    const { hen } = replay([create('lay_report', before), update('lay_report', before, after)], REF);
    expect(hen.days).toEqual([Date.UTC(2026, 10, 21) / DAY_MS, 6]);
    expect(hen.total_eggs).toBe(6);
  });
});

describe('quality rate', () => {
  it('weights by eggs, and a report without quality counts as grade_a', () => {
    const rs: [number, string | undefined][] = [
      [10, 'grade_a'],
      [5, 'cracked'],
      [5, undefined],
      [4, 'double_yolk'],
      [6, 'grade_b'],
    ];
    const { hen } = replay(reports(...rs.map(([eggs, q]) => lay(eggs, iso(at(22)), q))), REF);
    const good = 10 + 5 + 4;
    const total = 10 + 5 + 5 + 4 + 6;
    expect(materializeHen(hen, REF).quality_rate).toBe(Math.round((good / total) * 1e4) / 1e4);
  });

  it('is 0 without eggs, and 1 when every egg is good', () => {
    expect(materializeHen(emptyHen(HEN), REF).quality_rate).toBe(0);
    const { hen } = replay(reports(lay(3, iso(at(22))), lay(2, iso(at(21)), 'double_yolk')), REF);
    expect(materializeHen(hen, REF).quality_rate).toBe(1);
  });
});

describe('windows', () => {
  it('split at midnight UTC: 23:59:59.999 is the previous day, 00:00:00.000 the new one', () => {
    const { hen } = replay(
      reports(lay(1, iso(at(21, 23, 59, 59, 999))), lay(10, iso(at(22, 0, 0, 0, 0)))),
      REF,
    );
    expect(windowSums(hen.days, at(22, 0)).today).toBe(10);
    expect(windowSums(hen.days, at(22, 23, 59, 59, 999)).today).toBe(10);
    // Read one millisecond before midnight: the later report is in the future.
    const before = windowSums(hen.days, at(21, 23, 59, 59, 999));
    expect(before.today).toBe(1);
    expect(before.week).toBe(1);
    expect(before.month).toBe(1);
  });

  it('week counts the reference day and the 6 before it, not the 7th', () => {
    const { hen } = replay(
      reports(lay(2, iso(at(22 - 6, 0))), lay(30, iso(at(22 - 7, 23, 59, 59, 999)))),
      REF,
    );
    const w = windowSums(hen.days, REF);
    expect(w.week).toBe(2);
    expect(w.month).toBe(32);
  });

  it('month counts the reference day and the 29 before it, not the 30th', () => {
    const { hen } = replay(reports(lay(2, iso(at(22 - 29, 0))), lay(30, iso(at(22 - 30, 23)))), REF);
    const m = materializeHen(hen, REF);
    expect(m.eggs_month).toBe(2);
    expect(m.eggs_week).toBe(0);
    expect(m.eggs_today).toBe(0);
    expect(m.total_eggs).toBe(32);
  });

  it('avg_per_week is the last 28 days ÷ 4 (day r-27 counts, r-28 does not)', () => {
    const { hen, farm } = replay(
      reports(
        lay(8, iso(at(22))),
        lay(5, iso(at(22 - 27))),
        lay(100, iso(at(22 - 28))),
        lay(7, iso(at(22 - 29))),
      ),
      REF,
    );
    expect(materializeHen(hen, REF).avg_per_week).toBe((8 + 5) / 4);
    expect(materializeHen(hen, REF).eggs_month).toBe(8 + 5 + 100 + 7);
    expect(materializeFarm(farm, REF).avg_per_hen_per_week).toBe((8 + 5) / 4);
    const withHens: FarmDoc = { ...farm, active_hens: 3, total_hens: 4 };
    expect(materializeFarm(withHens, REF).avg_per_hen_per_week).toBe(
      Math.round(((8 + 5) / 4 / 3) * 1e4) / 1e4,
    );
  });

  it('days after the reference day never count', () => {
    const { hen } = replay(reports(lay(4, iso(at(22))), lay(9, iso(at(23, 0))), lay(9, iso(at(25)))), REF);
    expect(windowSums(hen.days, REF)).toEqual({ today: 4, week: 4, month: 4, last28: 4 });
    expect(hen.total_eggs).toBe(4 + 9 + 9);
    expect(windowSums(hen.days, at(25))).toEqual({ today: 9, week: 22, month: 22, last28: 22 });
  });
});

describe('pruneDays', () => {
  it('keeps dayOf(createdAt) - 30 and later (including future days), drops older', () => {
    const created = Date.UTC(2026, 10, 22, 15);
    const today = Date.UTC(2026, 10, 22) / DAY_MS;
    const days = [today - 31, 1, today - 30, 2, today - 29, 3, today, 4, today + 3, 5];
    expect(pruneDays(days, created)).toEqual([today - 30, 2, today - 29, 3, today, 4, today + 3, 5]);
    expect(days).toHaveLength(10);
  });

  it('runs inside evolveHen with the entry time', () => {
    const created = at(22);
    const { hen } = replay(reports(lay(5, iso(at(22 - 40))), lay(1, iso(at(22)))), created);
    expect(hen.days).toEqual([dayOf(created), 1]);
    expect(hen.total_eggs).toBe(6);
  });
});
