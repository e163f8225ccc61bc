import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { storeErrorCodes } from '@eggmesh/store';
import { newGenerationName, openBulkProjectionStore, SqlThread, SqlThreadError } from '@eggmesh/store-sqlite';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-sql-thread-'));
  dirs.push(dir);
  return dir;
};
const threads: SqlThread[] = [];
const open = (file: string, options?: { readonly?: boolean; readonly patienceMs?: number }) => {
  const thread = new SqlThread(file, options);
  threads.push(thread);
  return thread;
};
afterEach(async () => {
  for (const thread of threads.splice(0)) await thread.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const INSERT = 'INSERT INTO t (k, v) VALUES (?, ?)';
const ALL = 'SELECT k, v FROM t ORDER BY k';

describe('SqlThread (a connection in a worker thread)', () => {
  it('runs what it is sent in order, a read seeing every write sent before it, rows as arrays', async () => {
    const thread = open(join(tempDir(), 'a.db'));
    await thread.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)');
    // Not awaited one by one: the order of sending is the order of running.
    const writes = [1, 2, 3].map((k) => thread.write([[INSERT, [k, `v${k}`]]]));
    const read = thread.read([
      [ALL, []],
      ['SELECT count(*) FROM t WHERE k > ?', [1]],
    ]);
    await Promise.all(writes);
    expect(await read).toEqual([
      [
        [1, 'v1'],
        [2, 'v2'],
        [3, 'v3'],
      ],
      [[2]],
    ]);
  });

  it('rolls a write back whole when one of its statements fails, and goes on with the next', async () => {
    const thread = open(join(tempDir(), 'a.db'));
    await thread.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)');
    const failed = thread.write([
      [INSERT, [1, 'kept?']],
      [INSERT, [1, 'duplicate key']],
    ]);
    const next = thread.write([[INSERT, [2, 'next']]]);
    await expect(failed).rejects.toThrow(SqlThreadError);
    await expect(failed).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    await next;
    expect(await thread.read([[ALL, []]])).toEqual([[[2, 'next']]]);
  });

  it('rolls a write back when a statement changes another number of rows than expected', async () => {
    const thread = open(join(tempDir(), 'a.db'));
    await thread.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one')");
    const guarded = thread.write([
      [INSERT, [2, 'two']],
      ['UPDATE t SET v = ? WHERE k = ? AND v = ?', ['uno', 1, 'not one'], 1],
    ]);
    await expect(guarded).rejects.toMatchObject({ code: 'EGGMESH_UNEXPECTED_CHANGES' });
    expect(await thread.read([[ALL, []]])).toEqual([[[1, 'one']]]);
    await thread.write([['UPDATE t SET v = ? WHERE k = ? AND v = ?', ['uno', 1, 'one'], 1]]);
    expect(await thread.read([[ALL, []]])).toEqual([[[1, 'uno']]]);
  });

  /**
   * A thread of the given patience on a new file, and `during(thread)` called while another connection
   * holds an EXCLUSIVE lock on it for 1.5 s; resolves once the lock is gone.
   */
  async function whileLocked<T>(
    patienceMs: number,
    during: (thread: SqlThread) => T,
  ): Promise<{ thread: SqlThread; result: T }> {
    const file = join(tempDir(), 'a.db');
    const thread = open(file, { patienceMs });
    await thread.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)');
    const other = new Database(file);
    try {
      other.exec('BEGIN EXCLUSIVE');
      const result = during(thread);
      await sleep(1_500);
      other.exec('COMMIT');
      return { thread, result };
    } finally {
      other.close();
    }
  }

  // SQLite alone waits at most a second here (its busy timeout is min(patience, 1 s)), and its wait is
  // counted in its own sleeps, which a profiler's signals cut short: the rest is waited by the clock.
  it('waits by the clock, up to its patience, for a lock another connection holds', async () => {
    const { result } = await whileLocked(10_000, (thread) => ({
      write: thread.write([[INSERT, [1, 'after the lock']]]),
      read: thread.read([[ALL, []]]),
    }));
    await result.write;
    expect(await result.read).toEqual([[[1, 'after the lock']]]);
  });

  it('fails with SQLITE_BUSY once its patience has run out, and goes on after the lock is gone', async () => {
    let released = false;
    const { thread, result } = await whileLocked(200, (locked) =>
      locked.write([[INSERT, [1, 'never']]]).catch((error: unknown) => ({ error, released })),
    );
    released = true;
    expect(await result).toMatchObject({ error: { code: 'SQLITE_BUSY' }, released: false });
    await thread.write([[INSERT, [2, 'later']]]);
    expect(await thread.read([[ALL, []]])).toEqual([[[2, 'later']]]);
  });

  it('rejects what it was sent when the thread cannot open its file, and every call after', async () => {
    const thread = open(join(tempDir(), 'missing.db'), { readonly: true });
    await expect(thread.read([['SELECT 1', []]])).rejects.toThrow(/unable to open|does not exist|directory/i);
    await expect(thread.write([['SELECT 1', []]])).rejects.toThrow();
    await thread.close();
  });

  it('rejects the calls waiting when its thread ends under way, and every call after', async () => {
    const thread = open(join(tempDir(), 'a.db'));
    await thread.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)');
    // A read that keeps the thread busy for a while, and a write queued behind it.
    const slow = thread.read([
      [
        'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) SELECT count(*) FROM n',
        [],
      ],
    ]);
    const queued = thread.write([[INSERT, [1, 'never']]]);
    // The worker is private: ending it from outside is what a crash of the thread looks like here.
    await (thread as unknown as { worker: Worker }).worker.terminate();
    await expect(slow).rejects.toThrow(/SQL thread exited/);
    await expect(queued).rejects.toThrow(/SQL thread exited/);
    await expect(thread.read([[ALL, []]])).rejects.toThrow(/SQL thread exited/);
    await thread.close();
    // Nothing the thread had not run is in the file.
    const reader = open(join(dirs.at(-1) ?? '', 'a.db'), { readonly: true });
    expect(await reader.read([[ALL, []]])).toEqual([[]]);
  });
});

describe('a bulk build whose thread fails', () => {
  it('reports the failure on the next call and refuses to finish', async () => {
    const dir = tempDir();
    const store = openBulkProjectionStore({ dir, generation: newGenerationName() });
    // A generation has no farm tables: the thread's INSERT fails after the commit was handed over.
    await store.commit({
      expectedCheckpoint: 0,
      checkpoint: 1,
      documents: [{ entity: 'farm', id: 'f1', createdAt: 1, live: true, payload: { name: 'x' } }],
      state: [],
    });
    const next = store.commit({ expectedCheckpoint: 1, checkpoint: 2, documents: [], state: [] });
    await expect(next).rejects.toMatchObject({ code: storeErrorCodes.UNAVAILABLE });
    await expect(next).rejects.toThrow(/no such table: farm_versions/);
    await expect(store.checkpoint()).rejects.toThrow(/no such table/);
    await expect(store.finish()).rejects.toThrow(/no such table/);
    await store.close();
  });
});
