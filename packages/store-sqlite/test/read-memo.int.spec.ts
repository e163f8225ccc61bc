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

const farm = (name: string) => ({ name, farm_type: 'local', zone: 'north' });
const coop = (farmId: string, name = 'c') => ({ name, farm_id: farmId, capacity: 10, coop_type: 'barn' });

describe('a read-only store answers current reads from its memo while no other connection committed', () => {
  let dir: string;
  let now: number;
  let writer: SqlitePrimaryStore;
  let read: SqliteReadStore;
  const memo = () => {
    const m = read.primary.sync.memo;
    if (!m) throw new Error('a read-only primary has a memo');
    return m;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eggmesh-read-memo-'));
    now = 1_000;
    const files = dataFiles(dir);
    writer = openPrimaryStore({ file: files.primary, clock: () => now });
    openProjectionStore({ dir: files.projectionsDir });
    read = openReadStore(dir);
  });
  afterEach(async () => {
    await read.close();
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

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

  it('sees a commit made through a connection of its own process and of another process alike', async () => {
    // Two writers on the same file: the store's and a bare connection (as another process holds one).
    const f = randomUUID();
    await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('a') }]);
    expect((await read.get('farm', f))?.payload.name).toBe('a');
    const other = openDatabase(dataFiles(dir).primary);
    try {
      other
        .prepare(`UPDATE farm_versions SET payload = json_set(payload, '$.name', 'z') WHERE id = ?`)
        .run(f);
    } finally {
      other.close();
    }
    expect((await read.get('farm', f))?.payload.name).toBe('z');
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
      const memo = new ReadMemo(db, 10, 100);
      // Answers are filed after a look that missed (the look notes the database's version).
      expect(memo.get('a')).toBeUndefined();
      memo.set('a', ['a'], 4);
      memo.set('b', ['b'], 4);
      memo.set('empty', [], 0);
      expect(memo.size).toEqual({ answers: 3, rows: 9, bytes: 0 });
      memo.set('c', ['c'], 4);
      expect(memo.get('a')).toBeUndefined();
      expect(memo.get('b')).toEqual(['b']);
      expect(memo.size.rows).toBeLessThanOrEqual(10);
      memo.set('text', 'x'.repeat(90), 1, 90);
      memo.set('more text', 'y'.repeat(20), 1, 20);
      expect(memo.get('text')).toBeUndefined();
      expect(memo.size.bytes).toBe(20);
      // Too big alone: not kept at all.
      memo.set('huge', [], 11);
      expect(memo.get('huge')).toBeUndefined();
      expect(memo.size.rows).toBeLessThanOrEqual(10);
    } finally {
      db.close();
    }
  });
});
