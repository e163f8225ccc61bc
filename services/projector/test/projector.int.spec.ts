import { join } from 'node:path';
import { type EventLog, StoreError, storeErrorCodes } from '@eggmesh/store';
import { openProjectionStore } from '@eggmesh/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { Projector } from '../src/index.js';
import {
  consumption,
  container,
  coop,
  create,
  DAY,
  deposit,
  dumpGeneration,
  farm,
  hen,
  idFor,
  lay,
  modelAt,
  modelProjections,
  remove,
  transfer,
  update,
  withdrawal,
} from './helpers.js';
import { World } from './world.js';

const T0 = Date.parse('2026-03-10T08:00:00Z');
const MIN = 60_000;

const worlds: World[] = [];
const world = (start = T0, batchSize?: number) => {
  const w = new World(start, batchSize);
  worlds.push(w);
  return w;
};
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

const inv = (
  current_eggs: number,
  totals: Partial<Record<'dep' | 'wd' | 'in' | 'out' | 'con', number>>,
  utilization_pct: number,
) => ({
  current_eggs,
  total_deposits: totals.dep ?? 0,
  total_withdrawals: totals.wd ?? 0,
  total_transfers_in: totals.in ?? 0,
  total_transfers_out: totals.out ?? 0,
  total_consumed: totals.con ?? 0,
  utilization_pct,
});

/** Checks every visible document against the naive model, now and `at` every log time. */
function expectModel(w: World) {
  const entries = w.entries();
  const ref = w.clock.now;
  expect(w.snapshot(ref)).toEqual(modelProjections(entries, ref));
  for (const t of new Set(entries.map((e) => e.createdAt))) {
    expect(w.snapshot(t, t), `at ${new Date(t).toISOString()}`).toEqual(modelAt(entries, t));
  }
}

describe('container_inventory through the real stores', () => {
  it('clamps in log order, follows capacity changes and retracts updates and deletes', async () => {
    const w = world();
    const [A, B, X] = [idFor('container', 1), idFor('container', 2), idFor('container', 9)];
    const [d1, d2, d3, dx] = [1, 2, 3, 4].map((n) => idFor('deposit', n)) as [string, string, string, string];
    const [w1] = [idFor('withdrawal', 1)];
    const [t1, t2] = [idFor('transfer', 1), idFor('transfer', 2)];
    const [k1, k2] = [idFor('consumption', 1), idFor('consumption', 2)];
    const checks: { at: number; id: string; expected: ReturnType<typeof inv> }[] = [];
    const check = (at: number, id: string, expected: ReturnType<typeof inv>) => {
      expect(w.doc('container_inventory', id), `${id} after write at ${at}`).toMatchObject(expected);
      checks.push({ at, id, expected });
    };

    let at = await w.write(create('container', A, container(100)), create('container', B, container(50)));
    check(at, A, inv(0, {}, 0));
    check(at, B, inv(0, {}, 0));
    expect(w.doc('container_inventory', A)).toEqual({ id: A, container_id: A, ...inv(0, {}, 0) });

    at = await w.later(MIN, create('storage_deposit', d1, deposit(A, 30)));
    check(at, A, inv(30, { dep: 30 }, 30));
    // Withdrawing more than there is clamps at 0 now; the next deposit starts from 0, not from -20.
    at = await w.later(MIN, create('storage_withdrawal', w1, withdrawal(A, 50)));
    check(at, A, inv(0, { dep: 30, wd: 50 }, 0));
    at = await w.later(MIN, create('storage_deposit', d2, deposit(A, 40)));
    check(at, A, inv(40, { dep: 70, wd: 50 }, 40));
    at = await w.later(MIN, create('container_transfer', t1, transfer(A, B, 25)));
    check(at, A, inv(15, { dep: 70, wd: 50, out: 25 }, 15));
    check(at, B, inv(25, { in: 25 }, 50));
    at = await w.later(MIN, create('consumption_report', k1, consumption(B, 10)));
    check(at, B, inv(15, { in: 25, con: 10 }, 30));
    // Capacity change mid-stream: utilization uses the capacity at that point.
    at = await w.later(MIN, update('container', B, container(20)));
    check(at, B, inv(15, { in: 25, con: 10 }, 75));
    at = await w.later(MIN, create('container_transfer', t2, transfer(B, A, 30)));
    check(at, B, inv(0, { in: 25, out: 30, con: 10 }, 0));
    check(at, A, inv(45, { dep: 70, wd: 50, in: 30, out: 25 }, 45));
    at = await w.later(MIN, update('container', A, container(40)));
    check(at, A, inv(45, { dep: 70, wd: 50, in: 30, out: 25 }, 100));
    at = await w.later(MIN, create('storage_deposit', d3, deposit(A, 5)));
    check(at, A, inv(50, { dep: 75, wd: 50, in: 30, out: 25 }, 100));
    at = await w.later(MIN, update('container', A, container(120)));
    check(at, A, inv(50, { dep: 75, wd: 50, in: 30, out: 25 }, 41.6667));
    // Update: retract 50 (current 100, clamping is not undone), apply 10.
    at = await w.later(MIN, update('storage_withdrawal', w1, withdrawal(A, 10)));
    check(at, A, inv(90, { dep: 75, wd: 10, in: 30, out: 25 }, 75));
    at = await w.later(MIN, remove('storage_deposit', d1));
    check(at, A, inv(60, { dep: 45, wd: 10, in: 30, out: 25 }, 50));
    // A transfer update retracts out(B)/in(A), then applies out(A)/in(B).
    at = await w.later(MIN, update('container_transfer', t2, transfer(A, B, 10)));
    check(at, A, inv(20, { dep: 45, wd: 10, out: 35 }, 16.6667));
    check(at, B, inv(40, { in: 35, con: 10 }, 100));
    // Events for a container that does not exist yet count once it is created.
    at = await w.later(MIN, create('consumption_report', k2, consumption(X, 5)));
    expect(w.doc('container_inventory', X)).toBeNull();
    at = await w.later(MIN, create('container', X, container(10)));
    check(at, X, inv(0, { con: 5 }, 0));
    at = await w.later(MIN, create('storage_deposit', dx, deposit(X, 7)));
    check(at, X, inv(7, { dep: 7, con: 5 }, 70));
    // Delete hides; an `at` read before the delete still sees it; a re-create shows the kept counters.
    const beforeDelete = at;
    at = await w.later(MIN, remove('container', B));
    expect(w.doc('container_inventory', B)).toBeNull();
    expect(w.doc('container_inventory', B, { at })).toBeNull();
    expect(w.doc('container_inventory', B, { at: beforeDelete })).toMatchObject(
      inv(40, { in: 35, con: 10 }, 100),
    );
    at = await w.later(MIN, create('container', B, container(80)));
    check(at, B, inv(40, { in: 35, con: 10 }, 50));

    // `at` reads: each write's time shows exactly the state right after it.
    for (const c of checks) {
      expect(w.doc('container_inventory', c.id, { at: c.at }), `${c.id} at ${c.at}`).toMatchObject(
        c.expected,
      );
    }
    expect(w.doc('container_inventory', A, { at: T0 - 1 })).toBeNull();
    expectModel(w);
  });

  it('a transfer into the same container takes out, then puts in', async () => {
    const w = world();
    const A = idFor('container', 1);
    await w.write(
      create('container', A, container(10)),
      create('storage_deposit', idFor('deposit', 1), deposit(A, 4)),
    );
    await w.later(MIN, create('container_transfer', idFor('transfer', 1), transfer(A, A, 9)));
    // max(0, 4 - 9) + 9 = 9
    expect(w.doc('container_inventory', A)).toMatchObject(inv(9, { dep: 4, in: 9, out: 9 }, 90));
    expectModel(w);
  });
});

describe('hen counts and farm_id through coops', () => {
  it('follows hens moving, coops moving, statuses, deletes and a hen created before its coop', async () => {
    const w = world();
    const [F1, F2] = [idFor('farm', 1), idFor('farm', 2)];
    const [C1, C2, C3, C9] = [1, 2, 3, 9].map((n) => idFor('coop', n)) as [string, string, string, string];
    const [H1, H2, H3, H4, H5] = [1, 2, 3, 4, 5].map((n) => idFor('hen', n)) as [
      string,
      string,
      string,
      string,
      string,
    ];
    const checks: {
      at: number;
      counts: Record<string, [number, number] | null>;
      farms: Record<string, string | null>;
    }[] = [];
    const check = (
      at: number,
      counts: Record<string, [number, number] | null>,
      farms: Record<string, string | null>,
    ) => {
      for (const [id, c] of Object.entries(counts)) {
        const doc = w.doc('farm_output', id);
        if (c === null) expect(doc, `farm ${id}`).toBeNull();
        else expect(doc, `farm ${id}`).toMatchObject({ total_hens: c[0], active_hens: c[1] });
      }
      for (const [id, f] of Object.entries(farms)) {
        expect(w.doc('hen_productivity', id), `hen ${id}`).toMatchObject({ farm_id: f });
      }
      checks.push({ at, counts, farms });
    };

    let at = await w.write(
      create('farm', F1, farm('megafarm')),
      create('farm', F2, farm('local_farm')),
      create('coop', C1, coop(F1)),
      create('coop', C2, coop(F1)),
      create('coop', C3, coop(F2)),
      create('hen', H1, hen(C1)),
      create('hen', H2, hen(C1, 'active')),
      create('hen', H3, hen(C2, 'retired')),
      create('hen', H4, hen(C3, 'deceased')),
    );
    check(at, { [F1]: [3, 2], [F2]: [1, 0] }, { [H1]: F1, [H2]: F1, [H3]: F1, [H4]: F2 });
    at = await w.later(MIN, update('hen', H1, hen(C3)));
    check(at, { [F1]: [2, 1], [F2]: [2, 1] }, { [H1]: F2 });
    at = await w.later(MIN, update('coop', C2, coop(F2)));
    check(at, { [F1]: [1, 1], [F2]: [3, 1] }, { [H3]: F2, [H2]: F1 });
    at = await w.later(MIN, update('hen', H3, hen(C2, 'active')));
    check(at, { [F1]: [1, 1], [F2]: [3, 2] }, {});
    at = await w.later(MIN, update('hen', H2, hen(C1, 'retired')));
    check(at, { [F1]: [1, 0], [F2]: [3, 2] }, {});
    at = await w.later(MIN, remove('hen', H4));
    check(at, { [F1]: [1, 0], [F2]: [2, 2] }, {});
    expect(w.doc('hen_productivity', H4)).toBeNull();
    at = await w.later(MIN, remove('coop', C3));
    check(at, { [F1]: [1, 0], [F2]: [1, 1] }, { [H1]: null });
    at = await w.later(MIN, create('hen', H5, hen(C9)));
    check(at, { [F1]: [1, 0], [F2]: [1, 1] }, { [H5]: null });
    at = await w.later(MIN, create('coop', C9, coop(F1)));
    check(at, { [F1]: [2, 1], [F2]: [1, 1] }, { [H5]: F1 });
    at = await w.later(MIN, create('coop', C3, coop(F1)));
    check(at, { [F1]: [3, 2], [F2]: [1, 1] }, { [H1]: F1 });
    at = await w.later(MIN, update('farm', F1, farm('homestead')));
    check(at, { [F1]: [3, 2], [F2]: [1, 1] }, {});
    expect(w.doc('farm_output', F1)).toMatchObject({ farm_type: 'homestead' });
    expect(w.doc('farm_output', F1, { at: at - 1 })).toMatchObject({ farm_type: 'megafarm' });
    at = await w.later(MIN, update('hen', H1, hen(C2)));
    check(at, { [F1]: [2, 1], [F2]: [2, 2] }, { [H1]: F2 });
    // A deleted farm hides its document; hens in its (live) coops still name it.
    at = await w.later(MIN, remove('farm', F2));
    check(at, { [F1]: [2, 1], [F2]: null }, { [H1]: F2, [H3]: F2 });
    at = await w.later(MIN, update('coop', C2, coop(F1)));
    check(at, { [F1]: [4, 3], [F2]: null }, { [H1]: F1, [H3]: F1 });
    at = await w.later(MIN, create('farm', F2, farm('homestead')));
    check(at, { [F1]: [4, 3], [F2]: [0, 0] }, {});
    expect(w.doc('farm_output', F2)).toMatchObject({ farm_type: 'homestead', eggs_today: 0 });
    at = await w.later(MIN, remove('hen', H2));
    check(at, { [F1]: [3, 3] }, {});
    at = await w.later(MIN, create('hen', H2, hen(C9, 'active')));
    check(at, { [F1]: [4, 4] }, { [H2]: F1 });
    at = await w.later(MIN, create('lay_report', idFor('lay', 1), lay(H2, F1, 12, '2026-03-10T07:00:00Z')));
    expect(w.doc('farm_output', F1)).toMatchObject({ eggs_today: 12, avg_per_hen_per_week: 0.75 });

    for (const c of checks) {
      for (const [id, counts] of Object.entries(c.counts)) {
        const doc = w.doc('farm_output', id, { at: c.at });
        if (counts === null) expect(doc).toBeNull();
        else
          expect(doc, `farm ${id} at ${c.at}`).toMatchObject({
            total_hens: counts[0],
            active_hens: counts[1],
          });
      }
      for (const [id, f] of Object.entries(c.farms)) {
        expect(w.doc('hen_productivity', id, { at: c.at }), `hen ${id} at ${c.at}`).toMatchObject({
          farm_id: f,
        });
      }
    }
    expectModel(w);
  });
});

describe('lay reports and windows', () => {
  const D = Date.parse('2026-03-10T12:00:00Z');

  it('counts calendar-day UTC windows, the quality rate, and retracts updates and deletes exactly', async () => {
    const w = world(D);
    const [F, F2] = [idFor('farm', 1), idFor('farm', 2)];
    const C = idFor('coop', 1);
    const [H, H2] = [idFor('hen', 1), idFor('hen', 2)];
    const L = (n: number) => idFor('lay', n);
    await w.write(
      create('farm', F, farm()),
      create('farm', F2, farm('homestead')),
      create('coop', C, coop(F)),
      create('hen', H, hen(C)),
      create('hen', H2, hen(C)),
    );
    const empty = {
      eggs_today: 0,
      eggs_week: 0,
      eggs_month: 0,
      total_eggs: 0,
      avg_per_week: 0,
      quality_rate: 0,
    };
    expect(w.doc('hen_productivity', H)).toEqual({ id: H, hen_id: H, farm_id: F, ...empty });

    const first = await w.later(
      MIN,
      create('lay_report', L(1), lay(H, F, 6, '2026-03-10T06:00:00Z', 'grade_a')),
    );
    await w.later(
      MIN,
      create('lay_report', L(2), lay(H, F, 4, '2026-03-09T23:59:59.999Z', 'cracked')),
      create('lay_report', L(3), lay(H, F, 10, '2026-03-03T12:00:00Z')), // day 7 back: not in the week
      create('lay_report', L(4), lay(H, F, 3, '2026-02-09T00:00:00Z', 'double_yolk')), // day 29 back
      create('lay_report', L(5), lay(H, F, 5, '2026-02-08T23:59:59Z', 'grade_b')), // day 30 back
      create('lay_report', L(6), lay(H, F, 2, '2026-03-10T01:30:00+02:00', 'grade_a')), // 2026-03-09 UTC
      create('lay_report', L(7), lay(H, F, 8, '2026-03-11T00:00:00Z', 'grade_a')), // tomorrow
    );
    const all = w.clock.now;
    expect(w.doc('hen_productivity', H)).toEqual({
      id: H,
      hen_id: H,
      farm_id: F,
      eggs_today: 6,
      eggs_week: 12,
      eggs_month: 25,
      total_eggs: 38,
      avg_per_week: 5.5, // 22 in the 28 days ÷ 4
      quality_rate: 0.7632, // 29 / 38
    });
    expect(w.doc('farm_output', F)).toEqual({
      id: F,
      farm_id: F,
      farm_type: 'megafarm',
      eggs_today: 6,
      eggs_week: 12,
      eggs_month: 25,
      active_hens: 2,
      total_hens: 2,
      avg_per_hen_per_week: 2.75,
    });
    // Tomorrow, without new events.
    const tomorrow = D + DAY;
    expect(w.doc('hen_productivity', H, { ref: tomorrow })).toMatchObject({
      eggs_today: 8,
      eggs_week: 20,
      eggs_month: 30,
      avg_per_week: 7.5,
    });
    expect(w.doc('farm_output', F, { ref: tomorrow })).toMatchObject({ eggs_today: 8, eggs_week: 20 });
    expect(w.doc('hen_productivity', H, { ref: D + 2 * DAY })).toMatchObject({ eggs_today: 0 });
    expect(w.doc('hen_productivity', H, { ref: Date.parse('2026-03-16T23:59:59.999Z') })).toMatchObject({
      eggs_week: 14,
    });
    expect(w.doc('hen_productivity', H, { ref: Date.parse('2026-03-17T00:00:00Z') })).toMatchObject({
      eggs_week: 8,
    });
    expect(w.doc('hen_productivity', H, { ref: Date.parse('2026-04-10T00:00:00Z') })).toMatchObject({
      eggs_today: 0,
      eggs_week: 0,
      eggs_month: 0,
      total_eggs: 38,
      avg_per_week: 0,
    });
    // `at` the first report: only it counts, windows relative to that time.
    expect(w.doc('hen_productivity', H, { at: first })).toMatchObject({
      eggs_today: 6,
      eggs_week: 6,
      total_eggs: 6,
      quality_rate: 1,
    });
    expect(w.doc('farm_output', F, { at: first })).toMatchObject({
      eggs_today: 6,
      avg_per_hen_per_week: 0.75,
    });

    // Update: eggs, quality and hen change together.
    await w.later(MIN, update('lay_report', L(1), lay(H2, F, 2, '2026-03-10T06:00:00Z', 'cracked')));
    expect(w.doc('hen_productivity', H)).toMatchObject({
      eggs_today: 0,
      eggs_week: 6,
      eggs_month: 19,
      total_eggs: 32,
      avg_per_week: 4, // 16 ÷ 4
      quality_rate: 0.7188, // 23 / 32
    });
    expect(w.doc('hen_productivity', H2)).toMatchObject({
      eggs_today: 2,
      eggs_week: 2,
      eggs_month: 2,
      total_eggs: 2,
      avg_per_week: 0.5,
      quality_rate: 0,
    });
    expect(w.doc('farm_output', F)).toMatchObject({
      eggs_today: 2,
      eggs_week: 8,
      eggs_month: 21,
      avg_per_hen_per_week: 2.25,
    });
    // Update: the report moves to another farm and day.
    await w.later(MIN, update('lay_report', L(3), lay(H, F2, 10, '2026-03-10T09:00:00Z')));
    expect(w.doc('farm_output', F)).toMatchObject({ eggs_today: 2, eggs_week: 8, eggs_month: 11 });
    expect(w.doc('farm_output', F2)).toMatchObject({
      eggs_today: 10,
      eggs_week: 10,
      eggs_month: 10,
      active_hens: 0,
      total_hens: 0,
      avg_per_hen_per_week: 2.5,
    });
    expect(w.doc('hen_productivity', H)).toMatchObject({ eggs_today: 10, eggs_week: 16, total_eggs: 32 });
    // Deletes retract exactly.
    await w.later(MIN, remove('lay_report', L(2)), remove('lay_report', L(3)));
    expect(w.doc('hen_productivity', H)).toMatchObject({
      eggs_today: 0,
      eggs_week: 2,
      eggs_month: 5,
      total_eggs: 18,
      quality_rate: 0.7222, // 13 / 18
    });
    expect(w.doc('farm_output', F2)).toMatchObject({ eggs_today: 0, eggs_week: 0, eggs_month: 0 });
    for (const n of [1, 4, 5, 6, 7]) await w.later(MIN, remove('lay_report', L(n)));
    expect(w.doc('hen_productivity', H)).toEqual({ id: H, hen_id: H, farm_id: F, ...empty });
    expect(w.doc('hen_productivity', H2)).toEqual({ id: H2, hen_id: H2, farm_id: F, ...empty });
    expect(w.doc('hen_productivity', H, { at: all })).toMatchObject({ total_eggs: 38, eggs_today: 6 });
    expectModel(w);
  });

  it('eggs_today reads right the next day, also for `at` reads, as the log moves on for days', async () => {
    const w = world(Date.parse('2026-03-10T23:59:00Z'));
    const [F, C, H] = [idFor('farm', 1), idFor('coop', 1), idFor('hen', 1)];
    await w.write(create('farm', F, farm()), create('coop', C, coop(F)), create('hen', H, hen(C)));
    const t1 = await w.later(0, create('lay_report', idFor('lay', 1), lay(H, F, 5, '2026-03-10T23:00:00Z')));
    const t2 = await w.later(
      2 * MIN,
      create('lay_report', idFor('lay', 2), lay(H, F, 3, '2026-03-11T00:00:30Z')),
    );
    expect(w.doc('hen_productivity', H, { at: t1 })).toMatchObject({ eggs_today: 5, eggs_week: 5 });
    expect(w.doc('hen_productivity', H, { at: t2 })).toMatchObject({ eggs_today: 3, eggs_week: 8 });
    expect(w.doc('farm_output', F, { at: t2 })).toMatchObject({ eggs_today: 3, eggs_week: 8 });
    // 45 days of unrelated writes later, the reports are out of every window but still in the total.
    for (let d = 0; d < 45; d++)
      await w.later(DAY, update('farm', F, farm(d % 2 ? 'homestead' : 'megafarm')));
    expect(w.doc('hen_productivity', H)).toMatchObject({ eggs_today: 0, eggs_month: 0, total_eggs: 8 });
    expect(w.doc('hen_productivity', H, { at: t2 })).toMatchObject({ eggs_today: 3, eggs_month: 8 });
    expectModel(w);
  });
});

describe('document lifecycle', () => {
  it('documents exist (zeros) from creation, hide on delete, and come back on re-create', async () => {
    const w = world();
    const [F, C, H, K] = [idFor('farm', 1), idFor('coop', 1), idFor('hen', 1), idFor('container', 1)];
    const before = w.clock.now - 1;
    const created = await w.write(
      create('farm', F, farm('local_farm')),
      create('coop', C, coop(F)),
      create('hen', H, hen(C, 'retired')),
      create('container', K, container(12)),
      create('consumer', idFor('consumer', 1), { name: 'c', consumer_type: 'bakery', zone: 'west' }),
    );
    expect(w.doc('farm_output', F)).toEqual({
      id: F,
      farm_id: F,
      farm_type: 'local_farm',
      eggs_today: 0,
      eggs_week: 0,
      eggs_month: 0,
      active_hens: 0,
      total_hens: 1,
      avg_per_hen_per_week: 0,
    });
    expect(w.doc('hen_productivity', H)).toMatchObject({ farm_id: F, total_eggs: 0 });
    expect(w.doc('container_inventory', K)).toMatchObject(inv(0, {}, 0));
    expect([...w.snapshot(w.clock.now).keys()].sort()).toEqual(
      [`container_inventory/${K}`, `farm_output/${F}`, `hen_productivity/${H}`].sort(),
    );
    for (const [entity, id] of [
      ['farm_output', F],
      ['hen_productivity', H],
      ['container_inventory', K],
    ] as const) {
      expect(w.doc(entity, id, { at: before })).toBeNull();
      expect(w.doc(entity, id, { at: created })).not.toBeNull();
    }

    const deleted = await w.later(MIN, remove('hen', H), remove('farm', F), remove('container', K));
    expect(w.snapshot(w.clock.now).size).toBe(0);
    for (const [entity, id] of [
      ['farm_output', F],
      ['hen_productivity', H],
      ['container_inventory', K],
    ] as const) {
      expect(w.doc(entity, id)).toBeNull();
      expect(w.doc(entity, id, { at: deleted })).toBeNull();
      expect(w.doc(entity, id, { at: deleted - 1 })).not.toBeNull();
    }
    // Events for deleted actors are kept in the tombstone and show when the actor is re-created.
    await w.later(MIN, create('lay_report', idFor('lay', 1), lay(H, F, 4, '2026-03-10T08:00:00Z')));
    await w.later(MIN, create('farm', F, farm('megafarm')), create('hen', H, hen(C)));
    expect(w.doc('farm_output', F)).toMatchObject({
      farm_type: 'megafarm',
      eggs_today: 4,
      total_hens: 1,
      active_hens: 1,
    });
    expect(w.doc('hen_productivity', H)).toMatchObject({ farm_id: F, eggs_today: 4, total_eggs: 4 });
    expectModel(w);
  });
});

describe('exactly once', () => {
  it('a second projector on the same store finds nothing to apply; batch size does not change the result', async () => {
    const w = world(T0, 3);
    const [F, C, K] = [idFor('farm', 1), idFor('coop', 1), idFor('container', 1)];
    w.primary.commitSync([
      create('farm', F, farm()),
      create('coop', C, coop(F)),
      create('container', K, container(9)),
    ]);
    for (let i = 1; i <= 20; i++) {
      w.clock.advance(MIN);
      w.primary.commitSync([
        create('hen', idFor('hen', i), hen(C, i % 3 ? undefined : 'retired')),
        create('lay_report', idFor('lay', i), lay(idFor('hen', i), F, i % 7, '2026-03-10T05:00:00Z')),
        create('storage_deposit', idFor('deposit', i), deposit(K, i)),
        create('storage_withdrawal', idFor('withdrawal', i), withdrawal(K, 2 * i)),
      ]);
    }
    const head = w.primary.headSync();
    expect(await w.projector.catchUp()).toBe(head);
    const again = new Projector(w.primary.log, w.store, 5);
    expect(await again.step()).toEqual({ applied: 0, position: head });
    expect(await again.catchUp()).toBe(head);

    const fresh = openProjectionStore({ dir: join(w.dir, 'fresh') });
    try {
      await new Projector(w.primary.log, fresh, 1_000_000).catchUp();
      expect(dumpGeneration(w.store.db)).toEqual(dumpGeneration(fresh.db));
    } finally {
      void fresh.close();
    }
    expectModel(w);
  });

  it('a projector whose checkpoint moved underneath it fails its batch with CONFLICT and applies nothing', async () => {
    const w = world(T0, 4);
    const K = idFor('container', 1);
    w.primary.commitSync([create('container', K, container(100))]);
    for (let i = 1; i <= 12; i++)
      w.primary.commitSync([create('storage_deposit', idFor('deposit', i), deposit(K, i))]);

    const other = openProjectionStore({ dir: w.files.projectionsDir });
    const rival = new Projector(w.primary.log, other, 4);
    // The rival commits a batch while this projector is between reading its checkpoint and committing.
    let raced = false;
    const racing: EventLog = {
      ...w.primary.log,
      read: async (after, limit) => {
        if (!raced) {
          raced = true;
          await rival.step();
        }
        return w.primary.log.read(after, limit);
      },
    };
    const loser = new Projector(racing, w.store, 4);
    let error: unknown;
    try {
      await loser.step();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe(storeErrorCodes.CONFLICT);
    expect(w.store.checkpointSync()).toBe(4);
    await loser.catchUp();
    void other.close();
    expect(w.doc('container_inventory', K)).toMatchObject({ current_eggs: 78, total_deposits: 78 });
    expectModel(w);
  });
});

describe('apply lag', () => {
  it('tells onApplied, after each commit, the age of every entry it applied (write time to commit)', async () => {
    // The writer's clock is real time here: ages are what a reader waits.
    const w = world(Date.now(), 3);
    const K = idFor('container', 1);
    const ages: number[] = [];
    w.projector.onApplied = (age) => ages.push(age);
    w.primary.commitSync([create('container', K, container(500))]);
    const written = w.primary.commitSync(
      [1, 2, 3, 4, 5].map((n) => create('storage_deposit', idFor('deposit', n), deposit(K, n))),
    );
    // The clock steps versions apart by 1 ms at most; the write times are those of the log.
    const times = w.entries().map((e) => e.createdAt);
    expect(written.records).toHaveLength(5);
    await new Promise((r) => setTimeout(r, 30));
    const before = Date.now();
    await w.projector.catchUp();
    const after = Date.now();
    // Six entries in batches of 3: two commits, every entry told once.
    expect(ages).toHaveLength(times.length);
    ages.forEach((age, i) => {
      expect(age).toBeGreaterThanOrEqual(before - times[i]!);
      expect(age).toBeLessThanOrEqual(after - times[i]!);
    });
    // Nothing applied, nothing told.
    await w.projector.catchUp();
    expect(ages).toHaveLength(times.length);
  });
});
