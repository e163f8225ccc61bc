import { randomUUID } from 'node:crypto';
import type { SqlitePrimaryStore, SqliteReadStore } from '@eggmesh/store-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coop, farm, openReadFixture, type ReadFixture } from './read-fixture.js';

describe('the read-only store over files another connection writes', () => {
  let now: number;
  let writer: SqlitePrimaryStore;
  let read: SqliteReadStore;
  let fixture: ReadFixture;

  beforeEach(() => {
    now = 1_000;
    fixture = openReadFixture('eggmesh-read-store-', () => now);
    ({ writer, read } = fixture);
  });
  afterEach(() => fixture.close());

  it('sees every commit of the writer at its next read: updates, a rewrite with the same payload, deletes', async () => {
    const f = randomUUID();
    await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('a') }]);
    expect((await read.get('farm', f))?.payload.name).toBe('a');
    now += 5;
    await writer.commit([{ op: 'update', entity: 'farm', id: f, payload: farm('b') }]);
    expect((await read.get('farm', f))?.payload.name).toBe('b');
    expect((await read.list('farm', { limit: 10 }))[0]?.payload.name).toBe('b');
    // The old version, read at its time, is still itself.
    expect((await read.get('farm', f, { at: 1_000 }))?.payload.name).toBe('a');
    now += 5;
    await writer.commit([{ op: 'update', entity: 'farm', id: f, payload: farm('b') }]);
    expect((await read.get('farm', f))?.createdAt).toBe(now);
    await writer.commit([{ op: 'delete', entity: 'farm', id: f }]);
    expect(await read.get('farm', f)).toBeNull();
    expect(await read.list('farm', { limit: 10 })).toEqual([]);
  });

  it('pages many values in one findByAny: each value its own page, now and at a time', async () => {
    const farms = Array.from({ length: 300 }, () => randomUUID());
    const ops = farms.flatMap((f) =>
      [0, 1, 2].map((i) => ({
        op: 'create' as const,
        entity: 'coop' as const,
        id: randomUUID(),
        payload: coop(f, `c${i}`),
      })),
    );
    await writer.commit(ops);
    const t = now;
    now += 10;
    await writer.commit([{ op: 'create', entity: 'coop', id: randomUUID(), payload: coop(farms[0]!) }]);
    const all = await read.findByAny('coop', 'farm_id', farms, { limit: 1000 });
    expect(all).toHaveLength(901);
    const two = await read.findByAny('coop', 'farm_id', farms, { limit: 2 });
    expect(two).toHaveLength(600);
    for (const f of farms.slice(1, 6)) {
      const mine = ops
        .filter((o) => o.payload.farm_id === f)
        .map((o) => o.id)
        .sort();
      const got = two.filter((r) => r.payload.farm_id === f).map((r) => r.id);
      expect(got.sort()).toEqual(mine.slice(0, 2));
    }
    expect(await read.findByAny('coop', 'farm_id', farms, { limit: 1000, at: t })).toHaveLength(900);
    expect(await read.findByAny('coop', 'farm_id', farms, { at: t })).toHaveLength(900);
    // One value over its page beside one with none: read in one go, that value trimmed to its page.
    const four = (await read.findBy('coop', 'farm_id', farms[0]!, { limit: 10 })).map((r) => r.id);
    expect(four).toHaveLength(4);
    const trimmed = await read.findByAny('coop', 'farm_id', [farms[0]!, randomUUID()], { limit: 3 });
    expect(trimmed.map((r) => r.id).sort()).toEqual(four.slice(0, 3));
    const after = await read.findByAny('coop', 'farm_id', [farms[0]!, farms[1]!], {
      limit: 3,
      after: four[0],
    });
    expect(
      after
        .filter((r) => r.payload.farm_id === farms[0])
        .map((r) => r.id)
        .sort(),
    ).toEqual(four.slice(1, 4));
    expect(await read.findByAny('coop', 'farm_id', [])).toEqual([]);
    expect(await read.getMany('coop', [])).toEqual([]);
  });
});
