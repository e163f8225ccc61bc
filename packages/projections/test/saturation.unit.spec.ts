// Counters are exact integers 0..2^53-1 (GraphQL SafeInt on the read side): they saturate instead of
// summing doubles past 2^53, where a sum stops being exact.
import { containerInventorySchema, farmOutputSchema, henProductivitySchema } from '@eggmesh/schema';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  dayCountsOf,
  dayCountsRecord,
  emptyFarm,
  emptyHen,
  emptyInventory,
  evolveFarm,
  evolveHen,
  evolveInventory,
  materializeFarm,
  materializeHen,
  materializeInventory,
  windowSums,
} from '../src/index.js';

const MAX = Number.MAX_SAFE_INTEGER;
const C = '00000000-0000-4000-8000-00000000000c';
const H = '00000000-0000-4000-8000-00000000000a';
const F = '00000000-0000-4000-8000-00000000000f';
/** Eggs of one event: the schema allows 0..2^31-1. */
const eggs = fc.integer({ min: 0, max: 2_147_483_647 });
const T = Date.UTC(2026, 2, 1, 12);
const day = Math.floor(T / DAY_MS);

describe('saturation at Number.MAX_SAFE_INTEGER', () => {
  it('inventory totals and current_eggs never pass 2^53-1 and stay exact integers', () => {
    const kinds = ['deposit', 'transfer_in', 'withdrawal', 'consumed', 'transfer_out'] as const;
    fc.assert(
      fc.property(
        fc.integer({ min: MAX - 5_000_000_000, max: MAX }),
        fc.array(fc.tuple(fc.constantFrom(...kinds), eggs), { minLength: 1, maxLength: 30 }),
        (start, steps) => {
          let doc = {
            ...emptyInventory(C),
            capacity: 10,
            current_eggs: start,
            total_deposits: start,
            total_transfers_in: start,
            total_withdrawals: start,
            total_consumed: start,
            total_transfers_out: start,
          };
          let model = { current: BigInt(start), totals: new Map(kinds.map((k) => [k, BigInt(start)])) };
          const cap = (x: bigint) => (x > BigInt(MAX) ? BigInt(MAX) : x < 0n ? 0n : x);
          for (const [kind, n] of steps) {
            doc = evolveInventory(doc, { target: 'container_inventory', id: C, kind, eggs: n });
            const sign = kind === 'deposit' || kind === 'transfer_in' ? 1n : -1n;
            model = {
              current: cap(model.current + sign * BigInt(n)),
              totals: new Map(model.totals).set(kind, cap(model.totals.get(kind)! + BigInt(n))),
            };
          }
          expect(BigInt(doc.current_eggs)).toBe(model.current);
          expect(BigInt(doc.total_deposits)).toBe(model.totals.get('deposit'));
          expect(BigInt(doc.total_consumed)).toBe(model.totals.get('consumed'));
          expect(containerInventorySchema.safeParse(materializeInventory(doc)).success).toBe(true);
        },
      ),
    );
  });

  it('hen totals, day counts and window sums saturate', () => {
    fc.assert(
      fc.property(fc.array(eggs, { minLength: 1, maxLength: 20 }), (laid) => {
        let hen = { ...emptyHen(H), total_eggs: MAX - 10, good_eggs: MAX - 10 };
        // Thirty days each close to the limit: their window sums would pass 2^53.
        hen.days = dayCountsOf(
          Object.fromEntries(Array.from({ length: 30 }, (_, i) => [String(day - i), MAX - i])),
        );
        let farm = { ...emptyFarm(F), days: hen.days };
        for (const n of laid) {
          hen = evolveHen(hen, { target: 'hen_productivity', id: H, eggs: n, goodEggs: n, day }, T);
          farm = evolveFarm(farm, { target: 'farm_output', id: F, eggs: n, day }, T);
        }
        for (const value of [
          hen.total_eggs,
          hen.good_eggs,
          ...Object.values(dayCountsRecord(hen.days)),
          ...Object.values(dayCountsRecord(farm.days)),
        ]) {
          expect(Number.isSafeInteger(value)).toBe(true);
        }
        const w = windowSums(hen.days, T);
        expect(w).toEqual({ today: MAX, week: MAX, month: MAX, last28: MAX });
        const h = materializeHen(hen, T);
        expect(henProductivitySchema.safeParse(h).success, JSON.stringify(h)).toBe(true);
        const f = materializeFarm(farm, T);
        expect(farmOutputSchema.safeParse(f).success, JSON.stringify(f)).toBe(true);
      }),
    );
  });

  it('below the limit sums stay exact', () => {
    expect(windowSums([day - 1, 2 ** 52 - 1, day, 2 ** 52], T).week).toBe(2 ** 53 - 1);
  });
});

describe('projection schemas', () => {
  it('counters accept 2^53-1 and refuse 2^53 and fractions', () => {
    const doc = materializeInventory({
      ...emptyInventory('00000000-0000-4000-8000-000000000001'),
      total_deposits: MAX,
    });
    expect(containerInventorySchema.safeParse(doc).success).toBe(true);
    expect(containerInventorySchema.safeParse({ ...doc, total_deposits: MAX + 1 }).success).toBe(false);
    expect(containerInventorySchema.safeParse({ ...doc, total_deposits: 1.5 }).success).toBe(false);
  });
});
