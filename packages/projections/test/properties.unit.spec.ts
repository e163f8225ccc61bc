import {
  containerInventorySchema,
  eggQualities,
  farmOutputSchema,
  henProductivitySchema,
} from '@eggmesh/schema';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  dayCountsOf,
  dayCountsRecord,
  decodeDocument,
  documentJson,
  type Effect,
  type EffectSource,
  effectsOf,
  emptyFarm,
  emptyHen,
  emptyInventory,
  evolveFarm,
  evolveHen,
  evolveInventory,
  type FarmDoc,
  type HenDoc,
  type InventoryDoc,
  materializationKey,
  materialize,
  materializeFarm,
  materializeHen,
  materializeInventory,
  pruneDays,
  storedDocument,
  windowSums,
  withCapacity,
} from '../src/index.js';
import { consumption, create, deposit, iso, lay, remove, transfer, update, withdrawal } from './fixtures.js';

const BASE = Date.UTC(2026, 0, 1);
const uuid = fc.uuid({ version: 4 });
const quality = fc.option(fc.constantFrom(...eggQualities), { nil: undefined });

// Start of the UTC day holding `ms`, from calendar fields (independent of dayOf).
const startOfUtcDay = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
};

interface Report {
  eggs: number;
  ms: number;
}

// Eggs of the reports whose timestamp is within the n calendar days ending on ref's UTC day.
const naiveWindow = (reports: readonly Report[], ref: number, n: number) => {
  const end = startOfUtcDay(ref) + DAY_MS;
  const start = end - n * DAY_MS;
  return reports.filter((r) => r.ms >= start && r.ms < end).reduce((s, r) => s + r.eggs, 0);
};

/** A tiny projector: applies the effects of each entry, in order, to documents keyed by id. */
class Projector {
  readonly inventory = new Map<string, InventoryDoc>();
  readonly hens = new Map<string, HenDoc>();
  readonly farms = new Map<string, FarmDoc>();

  apply(entry: EffectSource, createdAt: number): void {
    for (const e of effectsOf(entry)) this.applyEffect(e, createdAt);
  }

  applyEffect(e: Effect, createdAt: number): void {
    switch (e.target) {
      case 'container_inventory':
        this.inventory.set(e.id, evolveInventory(this.inventory.get(e.id) ?? emptyInventory(e.id), e));
        break;
      case 'hen_productivity':
        this.hens.set(e.id, evolveHen(this.hens.get(e.id) ?? emptyHen(e.id), e, createdAt));
        break;
      case 'farm_output':
        this.farms.set(e.id, evolveFarm(this.farms.get(e.id) ?? emptyFarm(e.id), e, createdAt));
        break;
    }
  }
}

describe('properties', () => {
  it('lay effects commute when no pruning is involved', () => {
    const report = fc.record({
      eggs: fc.nat({ max: 50 }),
      ms: fc.integer({ min: BASE, max: BASE + 40 * DAY_MS }),
      quality,
    });
    const arb = fc
      .tuple(uuid, uuid, fc.array(report, { maxLength: 25 }))
      .chain(([hen, farm, rs]) =>
        fc.tuple(
          fc.constant(hen),
          fc.constant(farm),
          fc.constant(rs),
          fc.shuffledSubarray(rs, { minLength: rs.length, maxLength: rs.length }),
        ),
      );
    fc.assert(
      fc.property(arb, ([hen, farm, reports, shuffled]) => {
        const run = (rs: typeof reports) => {
          const p = new Projector();
          // Every report day is ≥ dayOf(BASE), so nothing is old enough to prune at BASE.
          for (const r of rs)
            p.apply(create('lay_report', lay(r.eggs, iso(r.ms), r.quality, hen, farm)), BASE);
          return p;
        };
        const a = run(reports);
        const b = run(shuffled);
        expect(b.hens.get(hen)).toEqual(a.hens.get(hen));
        expect(b.farms.get(farm)).toEqual(a.farms.get(farm));
        expect(a.hens.get(hen)?.total_eggs ?? 0).toBe(reports.reduce((s, r) => s + r.eggs, 0));
      }),
    );
  });

  it('create then delete of an inventory event restores the prior state when nothing clamps', () => {
    const kind = fc.constantFrom(
      'storage_deposit',
      'storage_withdrawal',
      'container_transfer',
      'consumption_report',
    );
    const arb = fc
      .record({
        kind,
        ids: fc.uniqueArray(uuid, { minLength: 2, maxLength: 2 }),
        eggs: fc.integer({ min: 1, max: 1000 }),
      })
      .chain(({ kind, ids, eggs }) => {
        const prior = fc.record({
          extra: fc.nat({ max: 10_000 }),
          totals: fc.array(fc.nat({ max: 100_000 }), { minLength: 5, maxLength: 5 }),
          capacity: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: null }),
        });
        return fc.record({
          kind: fc.constant(kind),
          ids: fc.constant(ids),
          eggs: fc.constant(eggs),
          priors: fc.tuple(prior, prior),
        });
      });
    fc.assert(
      fc.property(arb, ({ kind, ids, eggs, priors }) => {
        const [a = '', b = ''] = ids;
        const p = new Projector();
        ids.forEach((id, i) => {
          const pr = priors[i];
          if (!pr) return;
          const [d = 0, w = 0, ti = 0, to = 0, c = 0] = pr.totals;
          const doc: InventoryDoc = {
            ...emptyInventory(id),
            // current ≥ eggs: a withdrawal, transfer or consumption never clamps.
            current_eggs: eggs + pr.extra,
            total_deposits: d,
            total_withdrawals: w,
            total_transfers_in: ti,
            total_transfers_out: to,
            total_consumed: c,
          };
          p.inventory.set(id, withCapacity(doc, pr.capacity));
        });
        const before = structuredClone([...p.inventory]);
        const payload =
          kind === 'storage_deposit'
            ? deposit(a, eggs)
            : kind === 'storage_withdrawal'
              ? withdrawal(a, eggs)
              : kind === 'container_transfer'
                ? transfer(a, b, eggs)
                : consumption(a, eggs);
        p.apply(create(kind, payload), BASE);
        expect(p.inventory.get(a)).not.toEqual(new Map(before).get(a));
        p.apply(remove(kind, payload), BASE + 1);
        expect([...p.inventory]).toEqual(before);
      }),
    );
  });

  it('create then delete of a lay report restores the prior hen and farm', () => {
    const t = BASE + 12 * 3_600_000;
    const day = Math.floor(t / DAY_MS);
    const dayKey = fc.integer({ min: day - 30, max: day + 5 });
    const arb = fc.record({
      hen: uuid,
      farm: uuid,
      henDays: fc.dictionary(dayKey.map(String), fc.integer({ min: 1, max: 100 }), { maxKeys: 10 }),
      farmDays: fc.dictionary(dayKey.map(String), fc.integer({ min: 1, max: 100 }), { maxKeys: 10 }),
      eggs: fc.nat({ max: 50 }),
      reportDay: dayKey,
      offset: fc.integer({ min: 0, max: DAY_MS - 1 }),
      quality,
    });
    fc.assert(
      fc.property(arb, (x) => {
        const total = Object.values(x.henDays).reduce((s, n) => s + n, 0);
        const hen: HenDoc = {
          hen_id: x.hen,
          farm_id: x.farm,
          total_eggs: total,
          good_eggs: total,
          days: dayCountsOf(x.henDays),
        };
        const farm: FarmDoc = {
          ...emptyFarm(x.farm),
          farm_type: 'organic',
          active_hens: 2,
          days: dayCountsOf(x.farmDays),
        };
        const p = new Projector();
        p.hens.set(x.hen, hen);
        p.farms.set(x.farm, farm);
        const payload = lay(x.eggs, iso(x.reportDay * DAY_MS + x.offset), x.quality, x.hen, x.farm);
        p.apply(create('lay_report', payload), t);
        p.apply(remove('lay_report', payload), t);
        expect(p.hens.get(x.hen)).toEqual(hen);
        expect(p.farms.get(x.farm)).toEqual(farm);
      }),
    );
  });

  it('a public document depends on its reference time only through materializationKey', () => {
    const arb = fc.record({
      offsets: fc.dictionary(fc.integer({ min: -40, max: 5 }).map(String), fc.integer({ min: 1, max: 1000 })),
      total: fc.nat({ max: 10_000 }),
      good: fc.nat({ max: 10_000 }),
      activeHens: fc.nat({ max: 50 }),
      ref: fc.integer({ min: BASE - 50 * DAY_MS, max: BASE + 50 * DAY_MS }),
      other: fc.integer({ min: BASE - 50 * DAY_MS, max: BASE + 50 * DAY_MS }),
    });
    fc.assert(
      fc.property(arb, (x) => {
        const day = Math.floor(x.ref / DAY_MS);
        const days = Object.fromEntries(
          Object.entries(x.offsets).map(([k, v]) => [String(day + Number(k)), v]),
        );
        const payload = {
          hen_id: 'h',
          farm_id: 'f',
          total_eggs: x.total,
          good_eggs: x.good,
          farm_type: 'organic',
          active_hens: x.activeHens,
          total_hens: x.activeHens,
          days,
        };
        // Another time in the same UTC day, and an arbitrary one.
        const sameDay = day * DAY_MS + (((x.other % DAY_MS) + DAY_MS) % DAY_MS);
        expect(materializationKey(sameDay)).toBe(materializationKey(x.ref));
        for (const entity of ['hen_productivity', 'farm_output', 'container_inventory'] as const) {
          const at = materialize(entity, payload, x.ref);
          expect(materialize(entity, payload, sameDay)).toEqual(at);
          if (materializationKey(x.other) === materializationKey(x.ref)) {
            expect(materialize(entity, payload, x.other)).toEqual(at);
          }
        }
      }),
    );
  });

  it('pruning keeps every day a reader at ref ≥ createdAt needs', () => {
    // Days cluster around the entry's day, and refs are often close to it: that is where pruning bites.
    const arb = fc.record({
      offsets: fc.dictionary(fc.integer({ min: -36, max: 6 }).map(String), fc.integer({ min: 1, max: 1000 })),
      createdAt: fc.integer({ min: BASE - 50 * DAY_MS, max: BASE + 50 * DAY_MS }),
      later: fc.oneof(fc.nat({ max: 2 * DAY_MS }), fc.nat({ max: 100 * DAY_MS })),
    });
    fc.assert(
      fc.property(arb, ({ offsets, createdAt, later }) => {
        const day = Math.floor(createdAt / DAY_MS);
        const days = dayCountsOf(
          Object.fromEntries(Object.entries(offsets).map(([k, v]) => [String(day + Number(k)), v])),
        );
        const ref = createdAt + later;
        expect(windowSums(pruneDays(days, createdAt), ref)).toEqual(windowSums(days, ref));
      }),
      { numRuns: 500 },
    );
  });

  it('a hen replayed with pruning matches a count of its live reports at any later ref', () => {
    // Each step: add a report, or delete a live one; entry times never decrease.
    const step = fc.oneof(
      fc.record({
        add: fc.constant(true as const),
        eggs: fc.nat({ max: 40 }),
        ms: fc.integer({ min: BASE - 60 * DAY_MS, max: BASE + 60 * DAY_MS }),
        quality,
        gap: fc.nat({ max: 5 * DAY_MS }),
      }),
      fc.record({ add: fc.constant(false as const), pick: fc.nat(), gap: fc.nat({ max: 5 * DAY_MS }) }),
    );
    const arb = fc.record({
      hen: uuid,
      steps: fc.array(step, { maxLength: 40 }),
      start: fc.integer({ min: BASE - 40 * DAY_MS, max: BASE }),
      later: fc.nat({ max: 40 * DAY_MS }),
    });
    fc.assert(
      fc.property(arb, ({ hen, steps, start, later }) => {
        const p = new Projector();
        const live: (Report & { payload: ReturnType<typeof lay> })[] = [];
        let now = start;
        for (const s of steps) {
          now += s.gap;
          if (s.add) {
            const payload = lay(s.eggs, iso(s.ms), s.quality, hen);
            live.push({ eggs: s.eggs, ms: s.ms, payload });
            p.apply(create('lay_report', payload), now);
          } else if (live.length > 0) {
            const [gone] = live.splice(s.pick % live.length, 1);
            if (gone) p.apply(remove('lay_report', gone.payload), now);
          }
        }
        const doc = p.hens.get(hen) ?? emptyHen(hen);
        const ref = now + later;
        expect(windowSums(doc.days, ref)).toEqual({
          today: naiveWindow(live, ref, 1),
          week: naiveWindow(live, ref, 7),
          month: naiveWindow(live, ref, 30),
          last28: naiveWindow(live, ref, 28),
        });
        expect(doc.total_eggs).toBe(live.reduce((s, r) => s + r.eggs, 0));
      }),
    );
  });

  it('every materialized document validates against the schema package', () => {
    const pools = fc.record({
      containers: fc.uniqueArray(uuid, { minLength: 2, maxLength: 3 }),
      hens: fc.uniqueArray(uuid, { minLength: 1, maxLength: 2 }),
      farms: fc.uniqueArray(uuid, { minLength: 1, maxLength: 2 }),
    });
    const op = fc.record({
      what: fc.constantFrom('event', 'event', 'event', 'update', 'delete', 'capacity', 'farm'),
      kind: fc.constantFrom(
        'lay_report',
        'storage_deposit',
        'storage_withdrawal',
        'container_transfer',
        'consumption_report',
      ),
      i: fc.nat(),
      j: fc.nat(),
      eggs: fc.integer({ min: 1, max: 500 }),
      ms: fc.integer({ min: BASE - 40 * DAY_MS, max: BASE + 40 * DAY_MS }),
      quality,
      capacity: fc.option(fc.integer({ min: 0, max: 2000 }), { nil: null }),
      hens: fc.nat({ max: 20 }),
      gap: fc.nat({ max: DAY_MS }),
    });
    const arb = fc.record({
      pools,
      ops: fc.array(op, { maxLength: 60 }),
      refOffset: fc.integer({ min: -40 * DAY_MS, max: 40 * DAY_MS }),
    });
    fc.assert(
      fc.property(arb, ({ pools, ops, refOffset }) => {
        const pick = <T>(xs: readonly T[], n: number): T => xs[n % xs.length] as T;
        const p = new Projector();
        const events: { kind: EffectSource['entity']; payload: Record<string, unknown> }[] = [];
        let now = BASE;
        const payloadOf = (o: (typeof ops)[number]): Record<string, unknown> => {
          const c1 = pick(pools.containers, o.i);
          const c2 = pick(
            pools.containers.filter((c) => c !== c1),
            o.j,
          );
          switch (o.kind) {
            case 'lay_report':
              return lay(o.eggs % 13, iso(o.ms), o.quality, pick(pools.hens, o.i), pick(pools.farms, o.j));
            case 'storage_deposit':
              return deposit(c1, o.eggs);
            case 'storage_withdrawal':
              return withdrawal(c1, o.eggs);
            case 'container_transfer':
              return transfer(c1, c2, o.eggs);
            case 'consumption_report':
              return consumption(c1, o.eggs);
          }
        };
        for (const o of ops) {
          now += o.gap;
          if (o.what === 'event' || (events.length === 0 && (o.what === 'update' || o.what === 'delete'))) {
            const payload = payloadOf(o);
            events.push({ kind: o.kind, payload });
            p.apply(create(o.kind, payload), now);
          } else if (o.what === 'update') {
            const idx = o.j % events.length;
            const ev = events[idx];
            if (!ev) continue;
            const next = payloadOf({ ...o, kind: ev.kind as typeof o.kind });
            p.apply(update(ev.kind, ev.payload, next), now);
            events[idx] = { kind: ev.kind, payload: next };
          } else if (o.what === 'delete') {
            const [ev] = events.splice(o.j % events.length, 1);
            if (ev) p.apply(remove(ev.kind, ev.payload), now);
          } else if (o.what === 'capacity') {
            const id = pick(pools.containers, o.i);
            p.inventory.set(id, withCapacity(p.inventory.get(id) ?? emptyInventory(id), o.capacity));
          } else {
            const id = pick(pools.farms, o.i);
            const farm = p.farms.get(id) ?? emptyFarm(id);
            p.farms.set(id, { ...farm, farm_type: 'pasture', total_hens: o.hens, active_hens: o.hens % 7 });
          }
        }
        for (const id of pools.hens) if (!p.hens.has(id)) p.hens.set(id, emptyHen(id));
        const ref = now + refOffset;
        const stored = (doc: object) => JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
        for (const doc of p.inventory.values()) {
          expect(containerInventorySchema.safeParse(materializeInventory(doc)).error).toBeUndefined();
          const m = materialize('container_inventory', stored(doc), ref);
          expect(containerInventorySchema.safeParse(m).error).toBeUndefined();
        }
        for (const doc of p.hens.values()) {
          expect(henProductivitySchema.safeParse(materializeHen(doc, ref)).error).toBeUndefined();
          expect(
            henProductivitySchema.safeParse(materialize('hen_productivity', stored(doc), ref)).error,
          ).toBeUndefined();
        }
        for (const doc of p.farms.values()) {
          expect(farmOutputSchema.safeParse(materializeFarm(doc, ref)).error).toBeUndefined();
          expect(
            farmOutputSchema.safeParse(materialize('farm_output', stored(doc), ref)).error,
          ).toBeUndefined();
        }
        expect(p.inventory.size + p.hens.size + p.farms.size).toBeGreaterThan(0);
      }),
    );
  });
});

describe('the stored form of a document', () => {
  const dayMap = fc.dictionary(
    fc.integer({ min: 0, max: 80_000 }).map(String),
    fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    { maxKeys: 40 },
  );

  it('its JSON text is exactly what JSON.stringify writes for it, and decodes back to the document', () => {
    const arb = fc.record({
      hen: uuid,
      farm: fc.option(uuid, { nil: null }),
      total: fc.nat(),
      farmType: fc.string(),
      henDays: dayMap,
      farmDays: dayMap,
    });
    fc.assert(
      fc.property(arb, (x) => {
        const hen: HenDoc = {
          ...emptyHen(x.hen),
          farm_id: x.farm,
          total_eggs: x.total,
          days: dayCountsOf(x.henDays),
        };
        const farm: FarmDoc = {
          ...emptyFarm(x.farm ?? x.hen),
          farm_type: x.farmType,
          days: dayCountsOf(x.farmDays),
        };
        expect(dayCountsRecord(hen.days)).toEqual(x.henDays);
        expect(documentJson(hen)).toBe(JSON.stringify(storedDocument(hen)));
        expect(documentJson(farm)).toBe(JSON.stringify(storedDocument(farm)));
        const back = (json: string) => JSON.parse(json) as Record<string, unknown>;
        expect(
          decodeDocument('hen_productivity', {
            id: x.hen,
            payload: back(documentJson(hen)),
            live: true,
          }),
        ).toEqual({ doc: hen, live: true });
        expect(
          decodeDocument('farm_output', {
            id: farm.farm_id,
            payload: back(documentJson(farm)),
            live: false,
          }),
        ).toEqual({ doc: farm, live: false });
      }),
      { numRuns: 300 },
    );
  });

  it('an inventory document is stored as it is', () => {
    const doc = { ...emptyInventory('c1'), capacity: 10, current_eggs: 4 };
    expect(documentJson(doc)).toBe(JSON.stringify(doc));
    expect(storedDocument(doc)).toEqual(doc);
  });
});
