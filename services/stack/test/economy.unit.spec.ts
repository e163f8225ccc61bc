import { entities, isEntityName } from '@eggmesh/schema';
import { describe, expect, it } from 'vitest';
import { economy, presets, prng } from '../src/economy.js';

describe('seed economy', () => {
  const now = Date.UTC(2026, 10, 22, 12);
  const batches = economy(presets.small, 7, now);

  it('produces rows every schema accepts', () => {
    for (const { entity, rows } of batches) {
      expect(isEntityName(entity)).toBe(true);
      if (!isEntityName(entity)) continue;
      for (const row of rows) {
        const result = entities[entity].schema.safeParse(row);
        expect(result.success, `${entity}: ${JSON.stringify(result.error?.issues)}`).toBe(true);
      }
    }
  });

  it('has the sizes the preset asks for and references only rows it created earlier', () => {
    const rows = Object.fromEntries(batches.map((b) => [b.entity, b.rows]));
    const { farms, coopsPerFarm, hensPerCoop, containers, consumers } = presets.small;
    expect(rows.farm).toHaveLength(farms);
    expect(rows.coop).toHaveLength(farms * coopsPerFarm);
    expect(rows.hen).toHaveLength(farms * coopsPerFarm * hensPerCoop);
    expect(rows.container).toHaveLength(containers);
    expect(rows.consumer).toHaveLength(consumers);
    const ids = (entity: string) => new Set((rows[entity] ?? []).map((r) => r.id));
    const farmIds = ids('farm');
    const coopIds = ids('coop');
    const henIds = ids('hen');
    const containerIds = ids('container');
    expect(rows.coop!.every((c) => farmIds.has(c.farm_id))).toBe(true);
    expect(rows.hen!.every((h) => coopIds.has(h.coop_id))).toBe(true);
    expect(rows.lay_report!.length).toBeGreaterThan(0);
    expect(rows.lay_report!.every((r) => henIds.has(r.hen_id) && farmIds.has(r.farm_id))).toBe(true);
    expect(rows.container_transfer!.every((t) => containerIds.has(t.source_container_id))).toBe(true);
  });

  it('keeps event times inside the requested days, before now', () => {
    const oldest = now - presets.small.days * 86_400_000;
    for (const { entity, rows } of batches) {
      if (entities[entity as keyof typeof entities].kind !== 'event') continue;
      for (const row of rows) {
        const t = Date.parse(String(row.timestamp));
        expect(t).toBeGreaterThanOrEqual(oldest);
        expect(t).toBeLessThanOrEqual(now);
      }
    }
  });

  it('reports eggs on the current UTC day, so eggs_today is not empty after a seed', () => {
    const today = Math.floor(now / 86_400_000);
    const lay = batches.find((b) => b.entity === 'lay_report')!.rows;
    const onToday = lay.filter((r) => Math.floor(Date.parse(String(r.timestamp)) / 86_400_000) === today);
    expect(onToday.length).toBeGreaterThan(0);
  });

  it('repeats itself for a seed and differs across seeds', () => {
    const again = economy(presets.small, 7, now);
    expect(again[0]!.rows).toEqual(batches[0]!.rows);
    expect(economy(presets.small, 8, now)[0]!.rows).not.toEqual(batches[0]!.rows);
    const r = prng(1);
    const draws = Array.from({ length: 1000 }, () => r.next());
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    expect(new Set(draws).size).toBeGreaterThan(990);
  });
});
