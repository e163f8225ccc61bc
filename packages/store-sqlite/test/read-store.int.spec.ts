import { randomUUID } from 'node:crypto';
import {
  dataFiles,
  ProjectionReader,
  ReadMemo,
  type SqlitePrimaryStore,
  SqliteReadStore,
} from '@eggmesh/store-sqlite';
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

describe('the read memo: answers of current reads kept while the file is unchanged', () => {
  let now: number;
  let fixture: ReadFixture;

  beforeEach(() => {
    now = 1_000;
    fixture = openReadFixture('eggmesh-read-memo-', () => now);
  });
  afterEach(() => fixture.close());

  it('hands out the same answer again until another connection commits, then reads afresh', async () => {
    const { writer, read } = fixture;
    const f = randomUUID();
    await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('a') }]);
    const first = await read.get('farm', f);
    expect(await read.get('farm', f)).toBe(first);
    const list = await read.list('farm', { limit: 10 });
    expect(await read.list('farm', { limit: 10 })).toBe(list);
    // Reads at a time are never kept.
    expect(await read.get('farm', f, { at: now })).not.toBe(await read.get('farm', f, { at: now }));
    now += 5;
    await writer.commit([{ op: 'update', entity: 'farm', id: f, payload: farm('b') }]);
    expect((await read.get('farm', f))?.payload.name).toBe('b');
    expect((await read.list('farm', { limit: 10 }))[0]?.payload.name).toBe('b');
    // A missing row is an answer too, until a commit creates it.
    const g = randomUUID();
    expect(await read.get('farm', g)).toBeNull();
    await writer.commit([{ op: 'create', entity: 'farm', id: g, payload: farm('g') }]);
    expect((await read.get('farm', g))?.payload.name).toBe('g');
  });

  it('reads projections afresh after each projector commit', async () => {
    const { projections, read } = fixture;
    const farmId = randomUUID();
    const out = (total_hens: number, createdAt: number) => ({
      entity: 'farm_output' as const,
      id: farmId,
      payload: { farm_id: farmId, farm_type: 'homestead', total_hens },
      live: true,
      createdAt,
    });
    await projections.commit({ expectedCheckpoint: 0, checkpoint: 1, documents: [out(1, 100)], state: [] });
    await waitForPosition(read, 1);
    const one = await read.get('farm_output', farmId);
    expect(one?.payload.total_hens).toBe(1);
    expect(await read.get('farm_output', farmId)).toBe(one);
    await projections.commit({ expectedCheckpoint: 1, checkpoint: 2, documents: [out(2, 200)], state: [] });
    expect((await read.get('farm_output', farmId))?.payload.total_hens).toBe(2);
  });

  it("keeps nothing over a writable primary, whose own commits SQLite's data_version does not count", async () => {
    const { writer, dir } = fixture;
    const own = new SqliteReadStore(writer, new ProjectionReader(dataFiles(dir).projectionsDir));
    const f = randomUUID();
    await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('a') }]);
    expect((await own.get('farm', f))?.payload.name).toBe('a');
    now += 5;
    await writer.commit([{ op: 'update', entity: 'farm', id: f, payload: farm('b') }]);
    expect((await own.get('farm', f))?.payload.name).toBe('b');
    own.projections.close();
  });

  it('starts over once its rows are full, and never keeps an answer larger than all of them', () => {
    let reads = 0;
    const memo = new ReadMemo(() => 1, 3);
    const read = (rows: number) => () => {
      reads += 1;
      return Array.from({ length: rows }, (_, i) => i);
    };
    const a = memo.answer('a', read(2), (x) => x.length);
    expect(memo.answer('a', read(2), (x) => x.length)).toBe(a);
    expect(reads).toBe(1);
    memo.answer('b', read(2), (x) => x.length); // 4 rows: over, so the memo starts over with b alone
    expect(memo.answer('a', read(2), (x) => x.length)).not.toBe(a);
    expect(reads).toBe(3);
    const big = memo.answer('big', read(4), (x) => x.length);
    expect(memo.answer('big', read(4), (x) => x.length)).not.toBe(big);
  });
});

async function waitForPosition(read: SqliteReadStore, position: number): Promise<void> {
  for (let i = 0; i < 100 && (await read.projectionPosition()) < position; i++) {
    await read.changed(50);
  }
  expect(await read.projectionPosition()).toBeGreaterThanOrEqual(position);
}
