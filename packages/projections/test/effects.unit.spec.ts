import { entities, entityNames } from '@eggmesh/schema';
import { describe, expect, it } from 'vitest';
import { DAY_MS, type Effect, effectsOf } from '../src/index.js';
import {
  C1,
  C2,
  consumption,
  create,
  deposit,
  FARM,
  FARM2,
  HEN,
  lay,
  remove,
  transfer,
  update,
  withdrawal,
} from './fixtures.js';

// UTC day number computed from calendar fields, independently of dayOf.
const utcDay = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d) / DAY_MS;

describe('effectsOf', () => {
  it('gives nothing for actors and projections', () => {
    const others = entityNames.filter((n) => entities[n].kind !== 'event');
    expect(others.length).toBeGreaterThan(0);
    for (const entity of others) {
      const payload = { ...deposit(C1, 10), ...lay(5, '2026-11-22T06:30:00Z') };
      expect(effectsOf(create(entity, payload))).toEqual([]);
      expect(effectsOf(update(entity, payload, payload))).toEqual([]);
      expect(effectsOf(remove(entity, payload))).toEqual([]);
    }
  });

  it('maps each inventory event to its kind and container', () => {
    expect(effectsOf(create('storage_deposit', deposit(C1, 10)))).toEqual([
      { target: 'container_inventory', id: C1, kind: 'deposit', eggs: 10 },
    ]);
    expect(effectsOf(create('storage_withdrawal', withdrawal(C1, 3)))).toEqual([
      { target: 'container_inventory', id: C1, kind: 'withdrawal', eggs: 3 },
    ]);
    expect(effectsOf(create('consumption_report', consumption(C2, 7)))).toEqual([
      { target: 'container_inventory', id: C2, kind: 'consumed', eggs: 7 },
    ]);
  });

  it('a transfer hits both containers', () => {
    expect(effectsOf(create('container_transfer', transfer(C1, C2, 12)))).toEqual([
      { target: 'container_inventory', id: C1, kind: 'transfer_out', eggs: 12 },
      { target: 'container_inventory', id: C2, kind: 'transfer_in', eggs: 12 },
    ]);
  });

  it('a lay report feeds its hen and its own farm on the UTC day of its timestamp', () => {
    const day = utcDay(2026, 11, 22);
    expect(effectsOf(create('lay_report', lay(6, '2026-11-22T06:30:00Z', 'grade_a')))).toEqual([
      { target: 'hen_productivity', id: HEN, eggs: 6, goodEggs: 6, day },
      { target: 'farm_output', id: FARM, eggs: 6, day },
    ]);
    // An offset moves the report to the previous UTC day.
    const [hen] = effectsOf(create('lay_report', lay(6, '2026-11-22T01:00:00+03:00')));
    expect(hen).toMatchObject({ day: day - 1 });
  });

  it.each([
    ['grade_a', true],
    ['double_yolk', true],
    [undefined, true],
    ['grade_b', false],
    ['cracked', false],
  ] as const)('quality %s counts as good: %s', (quality, good) => {
    const [hen] = effectsOf(create('lay_report', lay(9, '2026-11-22T06:30:00Z', quality)));
    expect(hen).toMatchObject({ target: 'hen_productivity', eggs: 9, goodEggs: good ? 9 : 0 });
  });

  it('an update negates the previous payload, then applies the new one', () => {
    const effects = effectsOf(update('storage_deposit', deposit(C1, 10), deposit(C2, 15)));
    expect(effects).toEqual([
      { target: 'container_inventory', id: C1, kind: 'deposit', eggs: -10 },
      { target: 'container_inventory', id: C2, kind: 'deposit', eggs: 15 },
    ]);
  });

  it('an update of a lay report can move it to another farm and day', () => {
    const before = lay(4, '2026-11-20T10:00:00Z', 'cracked');
    const after = lay(5, '2026-11-21T10:00:00Z', 'grade_a', HEN, FARM2);
    const expected: Effect[] = [
      { target: 'hen_productivity', id: HEN, eggs: -4, goodEggs: 0, day: utcDay(2026, 11, 20) },
      { target: 'farm_output', id: FARM, eggs: -4, day: utcDay(2026, 11, 20) },
      { target: 'hen_productivity', id: HEN, eggs: 5, goodEggs: 5, day: utcDay(2026, 11, 21) },
      { target: 'farm_output', id: FARM2, eggs: 5, day: utcDay(2026, 11, 21) },
    ];
    expect(effectsOf(update('lay_report', before, after))).toEqual(expected);
  });

  it('a delete negates the previous payload', () => {
    expect(effectsOf(remove('container_transfer', transfer(C1, C2, 12)))).toEqual([
      { target: 'container_inventory', id: C1, kind: 'transfer_out', eggs: -12 },
      { target: 'container_inventory', id: C2, kind: 'transfer_in', eggs: -12 },
    ]);
  });

  it('negating zero eggs gives 0, not -0', () => {
    const [hen, farm] = effectsOf(remove('lay_report', lay(0, '2026-11-22T06:30:00Z', 'cracked')));
    expect(Object.is(hen?.eggs, 0)).toBe(true);
    expect(hen?.target === 'hen_productivity' && Object.is(hen.goodEggs, 0)).toBe(true);
    expect(Object.is(farm?.eggs, 0)).toBe(true);
  });

  it('ignores payloads missing what an effect needs', () => {
    expect(effectsOf(create('storage_deposit', { container_id: C1 }))).toEqual([]);
    expect(effectsOf(create('lay_report', { ...lay(3, 'not a time') }))).toEqual([]);
  });
});
