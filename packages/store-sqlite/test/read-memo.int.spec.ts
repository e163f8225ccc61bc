import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  dataFiles,
  openDatabase,
  openPrimaryStore,
  openProjectionStore,
  openReadStore,
  ReadMemo,
  type SqlitePrimaryStore,
  type SqliteReadStore,
} from '@eggmesh/store-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coop, farm, openReadFixture, type ReadFixture } from './read-fixture.js';

describe('a read-only store answers current reads from its memo while no other connection committed', () => {
  let dir: string;
  let now: number;
  let writer: SqlitePrimaryStore;
  let read: SqliteReadStore;
  let fixture: ReadFixture;
  const memo = () => {
    const m = read.primary.sync.memo;
    if (!m) throw new Error('a read-only primary has a memo');
    return m;
  };

  beforeEach(() => {
    now = 1_000;
    fixture = openReadFixture('eggmesh-read-memo-', () => now);
    ({ dir, writer, read } = fixture);
  });
  afterEach(() => fixture.close());

  it('hands out the same answer for a repeated read, and a fresh one after any commit', async () => {
    const f = randomUUID();
    const c1 = randomUUID();
    await writer.commit([
      { op: 'create', entity: 'farm', id: f, payload: farm('a') },
      { op: 'create', entity: 'coop', id: c1, payload: coop(f, 'one') },
    ]);
    const coops = await read.findByAny('coop', 'farm_id', [f]);
    expect(coops.map((r) => r.id)).toEqual([c1]);
    const hits = memo().hits;
    // The same array: not read again, not rebuilt.
    expect(await read.findByAny('coop', 'farm_id', [f])).toBe(coops);
    const list = await read.list('farm', { limit: 10 });
    expect(await read.list('farm', { limit: 10 })).toBe(list);
    expect(await read.getMany('farm', [f])).toBe(await read.getMany('farm', [f]));
    expect(memo().hits).toBe(hits + 3);

    // A commit that touches another entity still drops every answer: a new coop joins the relation.
    const c2 = randomUUID();
    now += 5;
    await writer.commit([{ op: 'create', entity: 'coop', id: c2, payload: coop(f, 'two') }]);
    const after = await read.findByAny('coop', 'farm_id', [f]);
    expect(after).not.toBe(coops);
    expect(after.map((r) => r.id).sort()).toEqual([c1, c2].sort());
    expect((await read.findBy('coop', 'farm_id', f, { limit: 10 })).map((r) => r.id).sort()).toEqual(
      [c1, c2].sort(),
    );

    // Updates and deletes are seen at once by get, list and JSON lists.
    expect((await read.get('farm', f))?.payload.name).toBe('a');
    now += 5;
    await writer.commit([{ op: 'update', entity: 'farm', id: f, payload: farm('b') }]);
    expect((await read.get('farm', f))?.payload.name).toBe('b');
    expect((await read.list('farm', { limit: 10 }))[0]?.payload.name).toBe('b');
    const fields = [{ key: 'name', source: 'name', type: 'string', nullable: false }] as const;
    expect((await read.listJson({ entity: 'farm', fields, limit: 10 }))?.json).toBe('[{"name":"b"}]');
    await writer.commit([{ op: 'delete', entity: 'farm', id: f }]);
    expect(await read.get('farm', f)).toBeNull();
    expect(await read.list('farm', { limit: 10 })).toEqual([]);
    expect((await read.listJson({ entity: 'farm', fields, limit: 10 }))?.json).toBe('[]');
  });

  it('remembers a missing row too, until a commit creates it', async () => {
    const f = randomUUID();
    expect(await read.get('farm', f)).toBeNull();
    const hits = memo().hits;
    expect(await read.get('farm', f)).toBeNull();
    expect(memo().hits).toBe(hits + 1);
    await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('late') }]);
    expect((await read.get('farm', f))?.payload.name).toBe('late');
  });

  it('does not memoize reads at a time (`at`)', async () => {
    const f = randomUUID();
    await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('a') }]);
    const { hits, misses } = memo();
    await read.get('farm', f, { at: now });
    await read.get('farm', f, { at: now });
    await read.findByAny('coop', 'farm_id', [f], { at: now });
    expect(memo().hits).toBe(hits);
    expect(memo().misses).toBe(misses);
  });

  it('keeps the answers about other entities across a commit, and drops those of the entities it logged', async () => {
    const f = randomUUID();
    const c = randomUUID();
    await writer.commit([
      { op: 'create', entity: 'farm', id: f, payload: farm('a') },
      { op: 'create', entity: 'coop', id: c, payload: coop(f) },
    ]);
    const coops = await read.findByAny('coop', 'farm_id', [f]);
    const farmRecord = await read.get('farm', f);
    expect(await read.list('consumer', { limit: 10 })).toEqual([]);
    // Another writer (as another process holds one) logs a consumer: farms and coops are unchanged.
    const other = openPrimaryStore({ file: dataFiles(dir).primary, clock: () => now });
    try {
      const consumer = randomUUID();
      await other.commit([
        {
          op: 'create',
          entity: 'consumer',
          id: consumer,
          payload: { name: 'x', zone: 'north', consumer_type: 'household' },
        },
      ]);
      const hits = memo().hits;
      expect(await read.findByAny('coop', 'farm_id', [f])).toBe(coops);
      expect(await read.get('farm', f)).toBe(farmRecord);
      expect(memo().hits).toBe(hits + 2);
      expect((await read.list('consumer', { limit: 10 })).map((r) => r.id)).toEqual([consumer]);
      // Another farm: this farm's answer stays, the list of farms does not.
      const farms = await read.list('farm', { limit: 10 });
      const g = randomUUID();
      await other.commit([{ op: 'create', entity: 'farm', id: g, payload: farm('g') }]);
      expect(await read.get('farm', f)).toBe(farmRecord);
      expect(await read.list('farm', { limit: 10 })).not.toBe(farms);
      expect((await read.list('farm', { limit: 10 })).length).toBe(2);
      // A change to the coops drops their answers (and only theirs).
      now += 5;
      await other.commit([{ op: 'update', entity: 'coop', id: c, payload: coop(f, 'renamed') }]);
      const renamed = await read.findByAny('coop', 'farm_id', [f]);
      expect(renamed).not.toBe(coops);
      expect(renamed[0]?.payload.name).toBe('renamed');
      expect(await read.get('farm', f)).toBe(farmRecord);
      await other.commit([{ op: 'delete', entity: 'coop', id: c }]);
      expect(await read.findByAny('coop', 'farm_id', [f])).toEqual([]);
      expect(await read.get('coop', c)).toBeNull();
    } finally {
      await other.close();
    }
  });

  it('drops the answers about the documents a projector commit wrote, and every list of their projection', async () => {
    const projections = openProjectionStore({ dir: dataFiles(dir).projectionsDir });
    try {
      const [a, b] = [randomUUID(), randomUUID()];
      let checkpoint = 0;
      // Every write at the same time: a document written again replaces its version row.
      const write = async (docs: ReadonlyArray<readonly [string, number]>) => {
        checkpoint += 1;
        await projections.commit({
          expectedCheckpoint: checkpoint - 1,
          checkpoint,
          documents: docs.map(([id, eggs]) => ({
            entity: 'container_inventory' as const,
            id,
            createdAt: now,
            live: true,
            payload: { container_id: id, current_eggs: eggs },
          })),
          state: [],
        });
      };
      const eggs = async (id: string) => (await read.get('container_inventory', id))?.payload.current_eggs;
      const listed = async () =>
        (await read.list('container_inventory', { limit: 10 })).map((r) => r.payload.current_eggs).sort();
      await write([
        [a, 3],
        [b, 5],
      ]);
      const first = await read.get('container_inventory', a);
      expect(first?.payload.current_eggs).toBe(3);
      expect(await eggs(b)).toBe(5);
      expect(await listed()).toEqual([3, 5]);
      await write([[b, 6]]);
      // A is untouched: the same record, from the memo.
      expect(await read.get('container_inventory', a)).toBe(first);
      expect(await eggs(b)).toBe(6);
      expect(await listed()).toEqual([3, 6]);
      // B's version row has the highest seq: its replacement must still be seen (the feed relies on a
      // replacing row being numbered above the row it replaces).
      await write([[b, 8]]);
      expect(await eggs(b)).toBe(8);
      await write([[b, 9]]);
      expect(await eggs(b)).toBe(9);
      expect(await read.get('container_inventory', a)).toBe(first);
      await write([[a, 4]]);
      expect(await eggs(a)).toBe(4);
      expect(await listed()).toEqual([4, 9]);
    } finally {
      await projections.close();
    }
  });
});

describe('EGGMESH_READ_MEMO_ROWS = 0', () => {
  it('opens a read store whose every read goes to SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-no-memo-'));
    const files = dataFiles(dir);
    const writer = openPrimaryStore({ file: files.primary });
    openProjectionStore({ dir: files.projectionsDir });
    const read = openReadStore(dir, { memoRows: 0 });
    try {
      const f = randomUUID();
      await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('a') }]);
      expect(read.primary.sync.memo).toBeUndefined();
      const first = await read.list('farm', { limit: 10 });
      expect(first.map((r) => r.id)).toEqual([f]);
      expect(await read.list('farm', { limit: 10 })).not.toBe(first);
    } finally {
      await read.close();
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ReadMemo', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eggmesh-memo-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps at most its rows and bytes, dropping the oldest answers first', () => {
    const db = openDatabase(join(dir, 'x.db'));
    try {
      const memo = new ReadMemo(db, undefined, 10, 100);
      // Answers are filed after a look that missed (the look notes the database's version).
      expect(memo.get('farm', 'a')).toBeUndefined();
      memo.set('farm', 'a', ['a'], 4);
      memo.set('coop', 'b', ['b'], 4);
      memo.set('farm', 'empty', [], 0);
      expect(memo.size).toEqual({ answers: 3, rows: 9, bytes: 0 });
      memo.set('coop', 'c', ['c'], 4);
      // Full: an answer is kept only from the second read of its key.
      expect(memo.get('coop', 'c')).toBeUndefined();
      expect(memo.get('coop', 'b')).toEqual(['b']);
      memo.set('coop', 'c', ['c'], 4);
      expect(memo.get('coop', 'c')).toEqual(['c']);
      // The oldest of the entity filed into first, then of the others.
      expect(memo.get('coop', 'b')).toBeUndefined();
      expect(memo.get('farm', 'a')).toEqual(['a']);
      expect(memo.size.rows).toBeLessThanOrEqual(10);
      memo.set('farm', 'text', 'x'.repeat(90), 1, 90);
      memo.set('farm', 'more text', 'y'.repeat(20), 1, 20);
      memo.set('farm', 'more text', 'y'.repeat(20), 1, 20);
      expect(memo.get('farm', 'text')).toBeUndefined();
      expect(memo.size.bytes).toBe(20);
      // Too big alone: not kept at all.
      memo.set('farm', 'huge', [], 11);
      expect(memo.get('farm', 'huge')).toBeUndefined();
      expect(memo.size.rows).toBeLessThanOrEqual(10);
    } finally {
      db.close();
    }
  });

  it('once full, keeps nothing of answers read once, however many', () => {
    const db = openDatabase(join(dir, 'x.db'));
    try {
      const memo = new ReadMemo(db, undefined, 10, 1_000);
      expect(memo.get('hen', 'h0')).toBeUndefined();
      for (let i = 0; i < 10; i++) memo.set('hen', `h${i}`, [i], 1);
      expect(memo.size.answers).toBe(10);
      // 100,000 keys read once each (more than the keys it remembers): the first ten stay.
      for (let i = 10; i < 100_010; i++) {
        expect(memo.get('hen', `h${i}`)).toBeUndefined();
        memo.set('hen', `h${i}`, [i], 1);
      }
      expect(memo.get('hen', 'h0')).toEqual([0]);
      expect(memo.get('hen', 'h100009')).toBeUndefined();
      // Read again while remembered: kept in place of the oldest.
      memo.set('hen', 'h100009', [100_009], 1);
      expect(memo.get('hen', 'h100009')).toEqual([100_009]);
      expect(memo.get('hen', 'h0')).toBeUndefined();
      expect(memo.size.answers).toBe(10);
    } finally {
      db.close();
    }
  });
});
