import {
  consumerSchema,
  containerSchema,
  coopSchema,
  entities,
  farmSchema,
  henSchema,
} from '@eggmesh/schema';
import { describe, expect, it } from 'vitest';
import { Dataset } from '../src/data/dataset.js';
import { presets } from '../src/data/presets.js';
import { fmix32, IdSpace, mulberry32, permutation } from '../src/data/prng.js';

const anchorMs = Date.UTC(2026, 0, 1);
const tiny = () => new Dataset({ preset: presets.tiny, seed: 7, anchorMs });
const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('prng', () => {
  it('fmix32 is a bijection on a sample (no collisions)', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 100_000; i++) seen.add(fmix32(i));
    expect(seen.size).toBe(100_000);
  });

  it('mulberry32 is deterministic and stays in range', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    for (let i = 0; i < 1000; i++) {
      const x = a.int(3, 9);
      expect(x).toBe(b.int(3, 9));
      expect(x).toBeGreaterThanOrEqual(3);
      expect(x).toBeLessThanOrEqual(9);
    }
  });

  it('permutation puts every target first, and after every other, about equally often', () => {
    const rng = mulberry32(7);
    const n = 4;
    const draws = 8000;
    const first = new Array<number>(n).fill(0);
    // follows[a][b]: how often b came right after a.
    const follows = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    for (let d = 0; d < draws; d++) {
      const order = permutation(rng, n);
      expect([...order].sort()).toEqual([0, 1, 2, 3]);
      first[order[0]!]! += 1;
      for (let i = 1; i < n; i++) follows[order[i - 1]!]![order[i]!]! += 1;
    }
    for (const count of first) expect(Math.abs(count - draws / n)).toBeLessThan(draws / n / 10);
    // Each ordered pair is adjacent in 3 of the 12 pairs' worth of places: draws × 3 / 12 each.
    for (let a = 0; a < n; a++)
      for (let b = 0; b < n; b++)
        if (a === b) expect(follows[a]![b]).toBe(0);
        else expect(Math.abs(follows[a]![b]! - draws / 4)).toBeLessThan(draws / 4 / 10);
  });

  it('IdSpace makes distinct, stable, version-4-shaped UUIDs', () => {
    const farms = new IdSpace(1, 'farm');
    const hens = new IdSpace(1, 'hen');
    const ids = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      ids.add(farms.id(i));
      ids.add(hens.id(i));
    }
    expect(ids.size).toBe(40_000);
    expect(farms.id(5)).toBe(new IdSpace(1, 'farm').id(5));
    expect(farms.id(5)).not.toBe(new IdSpace(2, 'farm').id(5));
    for (const id of [...ids].slice(0, 500)) expect(id).toMatch(uuidV4);
  });
});

describe('Dataset', () => {
  it('counts what it yields, in an order where every reference exists before it is used', () => {
    const d = tiny();
    const seen = new Set<string>();
    const perEntity = new Map<string, number>();
    for (const row of d.rows()) {
      for (const fk of entities[row.entity].foreignKeys) {
        expect(seen.has(row.payload[fk.field] as string), `${row.entity}.${fk.field}`).toBe(true);
      }
      expect(seen.has(row.id)).toBe(false);
      seen.add(row.id);
      perEntity.set(row.entity, (perEntity.get(row.entity) ?? 0) + 1);
    }
    const c = d.counts;
    expect(Object.fromEntries(perEntity)).toEqual({
      farm: c.farm,
      coop: c.coop,
      hen: c.hen,
      container: c.container,
      consumer: c.consumer,
      lay_report: c.lay_report,
      storage_deposit: c.storage_deposit,
      storage_withdrawal: c.storage_withdrawal,
      container_transfer: c.container_transfer,
      consumption_report: c.consumption_report,
    });
    expect(seen.size).toBe(c.total);
  });

  it('generates payloads the schema package accepts', () => {
    const d = tiny();
    for (const row of d.rows()) {
      const result = entities[row.entity].schema.safeParse(row.payload);
      expect(result.success, `${row.entity} ${JSON.stringify(row.payload)}`).toBe(true);
    }
    // The actor schemas are strict objects: a stray field would fail above, but check the types line up too.
    expect(farmSchema.parse(d.farm(0).payload).name).toBe('farm-0');
    expect(coopSchema.parse(d.coop(0).payload).farm_id).toBe(d.id('farm', 0));
    expect(henSchema.parse(d.hen(31).payload).coop_id).toBe(d.id('coop', 1));
    expect(containerSchema.parse(d.container(0).payload).capacity).toBeGreaterThan(0);
    expect(consumerSchema.parse(d.consumer(0).payload).name).toBe('consumer-0');
  });

  it('is a pure function of preset, seed and anchor', () => {
    const a = [...tiny().rows()];
    const b = [...tiny().rows()];
    expect(b).toEqual(a);
    const other = [...new Dataset({ preset: presets.tiny, seed: 8, anchorMs }).rows()];
    expect(other[0]?.id).not.toBe(a[0]?.id);
  });

  it('puts every event on one of the days before the anchor', () => {
    const d = tiny();
    const first = anchorMs - presets.tiny.days * 86_400_000;
    for (const row of d.rows()) {
      const ts = row.payload.timestamp;
      if (typeof ts !== 'string') continue;
      const t = Date.parse(ts);
      expect(t).toBeGreaterThanOrEqual(first);
      expect(t).toBeLessThan(anchorMs);
    }
  });

  it('predicts hen and farm projections from the rows it yields', () => {
    const d = tiny();
    const eggs = new Map<string, number>();
    for (const row of d.rows()) {
      if (row.entity !== 'lay_report') continue;
      const hen = row.payload.hen_id as string;
      eggs.set(hen, (eggs.get(hen) ?? 0) + (row.payload.eggs as number));
    }
    for (const h of [0, 17, d.counts.hen - 1]) {
      expect(d.henProductivity(h).total_eggs).toBe(eggs.get(d.id('hen', h)));
    }
    const farm = d.farmOutput(1);
    expect(farm.total_hens).toBe(presets.tiny.coopsPerFarm * presets.tiny.hensPerCoop);
    expect(farm.active_hens).toBeLessThanOrEqual(farm.total_hens);
  });

  it('ends the log with the final probe hen’s last lay report', () => {
    const d = tiny();
    let last: ReturnType<Dataset['hen']> | undefined;
    for (const row of d.rows()) last = row;
    expect(last?.entity).toBe('lay_report');
    expect(last?.payload.hen_id).toBe(d.finalProbe().henId);
  });

  it('sizes the national preset as MeshQL states it', () => {
    const c = new Dataset({ preset: presets.national, seed: 1, anchorMs }).counts;
    expect(c.farm).toBe(10_105);
    expect(c.container).toBe(60_530);
    expect(c.consumer).toBe(1_000_000);
    expect(c.hen).toBeGreaterThan(850_000);
    expect(c.hen).toBeLessThan(950_000);
    expect(c.events).toBeGreaterThan(5_300_000);
    expect(c.events).toBeLessThan(5_500_000);
  });
});
