import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  dataFiles,
  openPrimaryStore,
  openProjectionStore,
  openReadStore,
  RecordCache,
  type SqlitePrimaryStore,
  type SqliteReadStore,
} from '@eggmesh/store-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coop, farm, openReadFixture, type ReadFixture } from './read-fixture.js';

describe('the read-only store reuses parsed records only while the stored row is unchanged', () => {
  let now: number;
  let writer: SqlitePrimaryStore;
  let read: SqliteReadStore;
  let fixture: ReadFixture;

  beforeEach(() => {
    now = 1_000;
    fixture = openReadFixture('eggmesh-read-cache-', () => now);
    ({ writer, read } = fixture);
  });
  afterEach(() => fixture.close());

  it('hands out the same frozen record for an unchanged row, from get, list, findBy and findByAny', async () => {
    const f = randomUUID();
    const c = randomUUID();
    await writer.commit([
      { op: 'create', entity: 'farm', id: f, payload: farm('a') },
      { op: 'create', entity: 'coop', id: c, payload: coop(f) },
    ]);
    const first = await read.get('farm', f);
    expect(first?.payload.name).toBe('a');
    expect(Object.isFrozen(first?.payload)).toBe(true);
    expect(await read.get('farm', f)).toBe(first);
    expect((await read.list('farm', { limit: 10 }))[0]).toBe(first);
    expect((await read.getMany('farm', [f]))[0]).toBe(first);
    const coopRecord = await read.get('coop', c);
    expect((await read.findBy('coop', 'farm_id', f, { limit: 10 }))[0]).toBe(coopRecord);
    expect((await read.findByAny('coop', 'farm_id', [f], { limit: 10 }))[0]).toBe(coopRecord);
    expect((await read.findByAny('coop', 'farm_id', [f]))[0]).toBe(coopRecord);
  });

  it('reads a row another connection rewrote afresh, even with an identical payload at a new time', async () => {
    const f = randomUUID();
    await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('a') }]);
    const before = await read.get('farm', f);
    now += 5;
    await writer.commit([{ op: 'update', entity: 'farm', id: f, payload: farm('b') }]);
    const after = await read.get('farm', f);
    expect(after?.payload.name).toBe('b');
    expect((await read.list('farm', { limit: 10 }))[0]?.payload.name).toBe('b');
    // The old version, read at its time, is still itself.
    expect((await read.get('farm', f, { at: 1_000 }))?.payload.name).toBe('a');
    now += 5;
    await writer.commit([{ op: 'update', entity: 'farm', id: f, payload: farm('b') }]);
    const same = await read.get('farm', f);
    expect(same?.createdAt).toBe(now);
    expect(same).not.toBe(after);
    expect(before?.payload.name).toBe('a');
    await writer.commit([{ op: 'delete', entity: 'farm', id: f }]);
    expect(await read.get('farm', f)).toBeNull();
  });

  it('findByAny reuses a record by its version, and sees a new version at once, even at the same clock', async () => {
    const f = randomUUID();
    const c = randomUUID();
    await writer.commit([
      { op: 'create', entity: 'farm', id: f, payload: farm('a') },
      { op: 'create', entity: 'coop', id: c, payload: coop(f, 'x') },
    ]);
    // First read parses the payload; the second finds the same version and reuses the record.
    const first = (await read.findByAny('coop', 'farm_id', [f], { limit: 10 }))[0];
    expect(first?.payload.name).toBe('x');
    expect((await read.findByAny('coop', 'farm_id', [f], { limit: 10 }))[0]).toBe(first);
    // Same clock: the store still gives the update its own, later version.
    await writer.commit([{ op: 'update', entity: 'coop', id: c, payload: coop(f, 'y') }]);
    const paged = (await read.findByAny('coop', 'farm_id', [f], { limit: 10 }))[0];
    expect(paged?.payload.name).toBe('y');
    expect(paged?.createdAt).toBeGreaterThan(first?.createdAt ?? 0);
    expect((await read.findByAny('coop', 'farm_id', [f]))[0]?.payload.name).toBe('y');
    expect((await read.get('coop', c))?.payload.name).toBe('y');
    // A record first read by get is reused by findByAny once its version is known.
    const byGet = await read.get('farm', f);
    const coops = await read.findByAny('coop', 'farm_id', [f]);
    expect(await read.findByAny('coop', 'farm_id', [f])).toEqual(coops);
    expect((await read.findByAny('coop', 'farm_id', [f]))[0]).toBe(coops[0]);
    expect(byGet?.payload.name).toBe('a');
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

describe('RecordCache', () => {
  it('keeps at most its budget of payload text, dropping the oldest entries', () => {
    const cache = new RecordCache(1_000);
    const payload = JSON.stringify({ name: 'x'.repeat(90) });
    for (let i = 0; i < 50; i++) {
      cache.record('farm', `f${i}`, 1, payload);
      cache.record('coop', `c${i}`, 1, payload);
    }
    const { entries, bytes } = cache.size;
    expect(bytes).toBeLessThanOrEqual(1_000);
    expect(entries).toBe(Math.floor(1_000 / payload.length));
    // The newest entry is still there: the same object comes back.
    const row = ['c49', 1, payload] as const;
    expect(cache.record('coop', ...row)).toBe(cache.record('coop', ...row));
  });
});

describe('listJson on the read-only primary', () => {
  it('answers current rows as JSON, follows new versions, and refuses values of another type', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-json-list-'));
    const files = dataFiles(dir);
    let now = 1_000;
    const writer = openPrimaryStore({ file: files.primary, clock: () => now });
    openProjectionStore({ dir: files.projectionsDir });
    const read = openReadStore(dir);
    try {
      const ids = ['00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001'];
      await writer.commit(
        ids.map((id, i) => ({
          op: 'create' as const,
          entity: 'coop' as const,
          id,
          payload: coop('f', `c${i}`),
        })),
      );
      const fields = [
        { key: 'id', source: 'id', type: 'id', nullable: false },
        { key: 'n', source: 'name', type: 'string', nullable: false },
        { key: 'capacity', source: 'capacity', type: 'int', nullable: true },
      ] as const;
      const ask = () => read.listJson({ entity: 'coop', fields, limit: 10 });
      const first = await ask();
      expect(first?.json).toBe(
        JSON.stringify([
          { id: ids[1], n: 'c1', capacity: 10 },
          { id: ids[0], n: 'c0', capacity: 10 },
        ]),
      );
      expect(first?.conforming).toBe(true);
      expect((await ask())?.json).toBe(first?.json);
      now += 1;
      await writer.commit([{ op: 'update', entity: 'coop', id: ids[1]!, payload: coop('f', 'renamed') }]);
      expect(JSON.parse((await ask())?.json ?? '')[0].n).toBe('renamed');
      const byFarm = await read.listJson({
        entity: 'coop',
        fields,
        where: { field: 'farm_id', value: 'f' },
        after: ids[1],
        limit: 10,
      });
      expect(JSON.parse(byFarm?.json ?? '').map((r: { id: string }) => r.id)).toEqual([ids[0]]);
      now += 1;
      await writer.commit([
        { op: 'update', entity: 'coop', id: ids[0]!, payload: { ...coop('f'), capacity: 2 ** 31 } },
      ]);
      expect((await ask())?.conforming).toBe(false);
      expect(await read.listJson({ entity: 'hen_productivity', fields, limit: 10 })).toBeUndefined();
    } finally {
      await read.close();
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("builds each row's JSON in SQLite exactly as JSON.stringify would, and refuses every value its type does not take", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-json-types-'));
    const files = dataFiles(dir);
    const writer = openPrimaryStore({ file: files.primary });
    openProjectionStore({ dir: files.projectionsDir });
    const read = openReadStore(dir);
    const fields = [
      { key: 'id', source: 'id', type: 'id', nullable: false },
      { key: 'name', source: 'name', type: 'string', nullable: false },
      { key: 'note', source: 'note', type: 'string', nullable: true },
      { key: 'n', source: 'n', type: 'int', nullable: true },
      { key: 'x', source: 'x', type: 'float', nullable: true },
      { key: 'ok', source: 'ok', type: 'boolean', nullable: true },
    ] as const;
    // Each row alone in its farm, so each list is that one row.
    const rows: Array<{ payload: Record<string, unknown>; takes: boolean }> = [
      { payload: { name: 'plain', n: 0, x: 0.1, ok: true }, takes: true },
      {
        payload: {
          name: 'q " \\ \n \u0001 é 😀 \u2028 \ud800',
          note: null,
          n: 2 ** 31 - 1,
          x: 1e-7,
          ok: false,
        },
        takes: true,
      },
      { payload: { name: 'big', n: -(2 ** 31), x: 1.5e300, note: 'ünï' }, takes: true },
      { payload: { name: 'ints as floats', x: 123_456_789_012_345, n: -0 }, takes: true },
      { payload: { name: 'int too big', n: 2 ** 31 }, takes: false },
      { payload: { name: 'int with a fraction', n: 1.5 }, takes: false },
      { payload: { name: 'int as text', n: '5' }, takes: false },
      { payload: { name: 'float as text', x: '0.5' }, takes: false },
      { payload: { name: 'boolean as number', ok: 1 }, takes: false },
      { payload: { name: 7 }, takes: false },
      { payload: { name: null }, takes: false },
      { payload: { note: 'no name' }, takes: false },
      { payload: { name: 'object', note: { a: 1 } }, takes: false },
    ];
    try {
      const ids = rows.map(() => randomUUID());
      await writer.commit(
        rows.map((row, i) => ({
          op: 'create' as const,
          entity: 'coop' as const,
          id: ids[i]!,
          payload: { ...row.payload, farm_id: `farm-${i}` },
        })),
      );
      for (const [i, row] of rows.entries()) {
        const list = await read.listJson({
          entity: 'coop',
          fields,
          where: { field: 'farm_id', value: `farm-${i}` },
          limit: 10,
        });
        expect(list?.conforming, String(row.payload.name)).toBe(row.takes);
        if (!row.takes) continue;
        const p = row.payload;
        const want = {
          id: ids[i],
          name: p.name,
          note: p.note ?? null,
          n: p.n ?? null,
          x: p.x ?? null,
          ok: p.ok ?? null,
        };
        expect(list?.json).toBe(JSON.stringify([want]));
        expect(list?.payloadBytes).toBeGreaterThanOrEqual(
          JSON.stringify({ ...p, farm_id: `farm-${i}` }).length,
        );
      }
    } finally {
      await read.close();
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('once full, keeps a record only from the second read of its id: reads that never come back keep nothing', () => {
    const payload = JSON.stringify({ name: 'x' });
    const cache = new RecordCache(payload.length * 8);
    // Not full yet: kept from the first read.
    for (let i = 0; i < 8; i++) cache.record('farm', `f${i}`, 1, payload);
    expect(cache.size.entries).toBe(8);
    const first = cache.record('coop', 'c1', 1, payload);
    expect(cache.size.entries).toBe(8);
    const second = cache.record('coop', 'c1', 1, payload);
    expect(second).not.toBe(first);
    expect(cache.record('coop', 'c1', 1, payload)).toBe(second);
    // Kept in place of the oldest entry.
    expect(cache.size.entries).toBe(8);
    expect(cache.record('farm', 'f7', 1, payload)).toBe(cache.record('farm', 'f7', 1, payload));
    // 100,000 ids read once each: none kept, and the ids remembered stay bounded (the first is forgotten).
    for (let i = 0; i < 100_000; i++) cache.record('hen', `h${i}`, 1, payload);
    expect(cache.record('coop', 'c1', 1, payload)).toBe(second);
    const h0 = cache.record('hen', 'h0', 1, payload);
    expect(cache.record('hen', 'h0', 1, payload)).not.toBe(h0);
    const last = cache.record('hen', 'h99999', 1, payload);
    expect(cache.record('hen', 'h99999', 1, payload)).toBe(last);
  });
});
