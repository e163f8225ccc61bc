import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WriteOperation } from '@eggmesh/store';
import {
  openDatabase,
  openPrimaryStore,
  openProjectionStore,
  WalCheckpointer,
  WalIndexHeader,
} from '@eggmesh/store-sqlite';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-ckpt-'));
  dirs.push(dir);
  return dir;
};
const create = (name: string): WriteOperation => ({
  op: 'create',
  entity: 'farm',
  id: randomUUID(),
  payload: { name, farm_type: 'local', zone: 'z' },
});

/**
 * What the database file alone holds, without its WAL: a copy of the file, opened on its own. Only
 * pages a checkpoint has copied out of the WAL are in it.
 */
function fileAlone(file: string, sql: string): unknown {
  const copy = join(tempDir(), 'alone.db');
  copyFileSync(file, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return db.prepare(sql).pluck().get();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    db.close();
  }
}

/** SQLite's default checkpoint threshold, the checkpointer's default `minFrames`. */
const DEFAULT_MIN_FRAMES = 1000;

/** The frames in the WAL of `file` now (its wal-index header). */
const walFrames = (file: string): number => {
  const header = new WalIndexHeader(file);
  try {
    return header.lastFrame() ?? -1;
  } finally {
    header.close();
  }
};

/**
 * Calls `commit(i)` (one transaction each) until the WAL of `file` holds the default threshold's frames;
 * returns how many commits that took.
 */
async function commitUntilThreshold(file: string, commit: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 5000; i++) {
    await commit(i);
    if (walFrames(file) >= DEFAULT_MIN_FRAMES) return i + 1;
  }
  throw new Error('the WAL never reached the threshold');
}

describe('WAL checkpoints off the writer (WalCheckpointer)', () => {
  it("a primary's acknowledged commits reach the database file without an inline checkpoint", async () => {
    const file = join(tempDir(), 'primary.db');
    const store = openPrimaryStore({ file });
    const checkpointer = store.checkpointer!;
    expect(checkpointer).toBeDefined();
    // Well under the inline limit (10,000 frames): only the thread can have copied these into the file.
    const commits = await commitUntilThreshold(file, (i) => store.commit([create(`farm ${i}`)]));
    await checkpointer.settled();
    expect(checkpointer.stats()).toMatchObject({ running: true, failed: undefined });
    expect(checkpointer.stats().checkpoints).toBeGreaterThan(0);
    expect(fileAlone(file, 'SELECT count(*) FROM farm_current')).toBe(commits);
    expect(fileAlone(file, 'SELECT count(*) FROM event_log')).toBe(commits);
    await store.close();
  });

  it('commits that leave the WAL under the threshold neither checkpoint nor start the WAL over', async () => {
    const file = join(tempDir(), 'primary.db');
    const store = openPrimaryStore({ file });
    const salt = () => readFileSync(`${file}-wal`).subarray(16, 24).toString('hex');
    await store.commit([create('first')]);
    const first = salt();
    for (let i = 0; i < 20; i++) {
      await store.commit([create(`farm ${i}`)]);
      // Time for a checkpoint had one been asked for: a WAL copied in full would start over with the
      // next commit, under new salts in its header (and an fsync of it inside that commit).
      await sleep(5);
    }
    expect(walFrames(file)).toBeLessThan(DEFAULT_MIN_FRAMES);
    expect(store.checkpointer!.stats()).toMatchObject({ checkpoints: 0, running: false });
    expect(salt()).toBe(first);
    await store.close();
  });

  it("a projection generation's commits reach its file the same way", async () => {
    const dir = tempDir();
    const store = openProjectionStore({ dir });
    const file = join(dir, store.generation);
    let checkpoint = await store.checkpoint();
    const batch = async (b: number) => {
      await store.commit({
        expectedCheckpoint: checkpoint,
        checkpoint: checkpoint + 1,
        documents: [
          {
            entity: 'hen_productivity',
            id: `hen-${b}`,
            createdAt: 1000 + b,
            live: true,
            payload: { hen_id: `hen-${b}`, total_eggs: b },
          },
        ],
        state: [],
      });
      checkpoint += 1;
    };
    const batches = await commitUntilThreshold(file, batch);
    await store.checkpointer!.settled();
    expect(store.checkpointer!.stats().checkpoints).toBeGreaterThan(0);
    expect(fileAlone(file, 'SELECT count(*) FROM hen_productivity_current')).toBe(batches);
    expect(fileAlone(file, "SELECT value FROM projector_meta WHERE key = 'checkpoint'")).toBe(batches);
    await store.close();
  });

  /** A WAL database with one table, and one checkpointer over it (no store with a checkpointer of its own). */
  const walTable = (options: ConstructorParameters<typeof WalCheckpointer>[2]) => {
    const file = join(tempDir(), 'plain.db');
    const db = openDatabase(file);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const checkpointer = new WalCheckpointer(db, file, options);
    const write = (body: string) => {
      insert.run(body);
      checkpointer.committed();
    };
    const inFile = (body: string) => fileAlone(file, `SELECT count(*) FROM t WHERE body = '${body}'`);
    return { db, checkpointer, write, inFile };
  };

  it('the thread starts with a commit, ends after the idle time, and starts again with the next commit', async () => {
    const { db, checkpointer, write, inFile } = walTable({ idleExitMs: 50, restMs: 1, minFrames: 1 });
    expect(checkpointer.stats().running).toBe(false);
    write('first');
    expect(checkpointer.stats().running).toBe(true);
    await checkpointer.settled();
    expect(checkpointer.stats().checkpoints).toBeGreaterThanOrEqual(1);
    expect(inFile('first')).toBe(1);
    for (let i = 0; i < 50 && checkpointer.stats().running; i++) await sleep(20);
    expect(checkpointer.stats().running).toBe(false);

    const before = checkpointer.stats().checkpoints;
    write('second');
    expect(checkpointer.stats().running).toBe(true);
    await checkpointer.settled();
    expect(checkpointer.stats().checkpoints).toBeGreaterThan(before);
    expect(inFile('second')).toBe(1);
    await checkpointer.close();
    expect(checkpointer.stats().running).toBe(false);
    db.close();
  });

  it('a commit right after the idle stop starts a new thread, which the old one ending does not disturb', async () => {
    const { db, checkpointer, write, inFile } = walTable({ idleExitMs: 1, restMs: 1, minFrames: 1 });
    write('first');
    await checkpointer.settled();
    // The idle stop lets go of the thread at once; the thread itself ends a moment later.
    for (let i = 0; i < 100 && checkpointer.stats().running; i++) await sleep(1);
    expect(checkpointer.stats().running).toBe(false);
    write('second');
    await sleep(50);
    await checkpointer.settled();
    // The old thread's closing connection may hold the checkpoint lock for a moment (a busy answer):
    // the new thread tries again until everything is copied.
    expect(checkpointer.stats().failed).toBeUndefined();
    expect(inFile('second')).toBe(1);
    await checkpointer.close();
    db.close();
  });

  it('a writer that never pauses still keeps the WAL bounded (the inline limit)', async () => {
    const file = join(tempDir(), 'primary.db');
    const db = openDatabase(file);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    const checkpointer = new WalCheckpointer(db, file, { inlineLimitPages: 50 });
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const body = 'x'.repeat(3000);
    // Back to back, with no thread to copy behind it: only the writer's own inline checkpoint lets the
    // WAL start over from its beginning.
    for (let i = 0; i < 2000; i++) insert.run(body);
    const frame = 4096 + 24;
    // 2000 rows of 3 KB would need well over 1,500 frames without a checkpoint.
    expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(100 * frame + 32);
    await checkpointer.close();
    db.close();
  });

  it('closing the store ends the thread first, so the last connection removes the WAL', async () => {
    const file = join(tempDir(), 'primary.db');
    const store = openPrimaryStore({ file });
    const commits = await commitUntilThreshold(file, (i) => store.commit([create(`farm ${i}`)]));
    expect(store.checkpointer!.stats().running).toBe(true);
    await store.close();
    expect(store.checkpointer!.stats().running).toBe(false);
    expect(existsSync(`${file}-wal`)).toBe(false);
    const reopened = openPrimaryStore({ file, readonly: true });
    expect(reopened.db.prepare('SELECT count(*) FROM farm_current').pluck().get()).toBe(commits);
    await reopened.close();
  });

  it('closing the store while a read-only connection has the file open leaves every write in the file', async () => {
    const file = join(tempDir(), 'primary.db');
    const store = openPrimaryStore({ file });
    await store.commit([create('first')]);
    // A read-only connection, as the edge and the read-api hold: it closes after the writer, and a
    // read-only connection never checkpoints, so SQLite's own checkpoint at the last close never comes.
    const reader = new Database(file, { readonly: true });
    expect(reader.prepare('SELECT count(*) FROM farm_current').pluck().get()).toBe(1);
    for (let i = 0; i < 10; i++) await store.commit([create(`farm ${i}`)]);
    expect(walFrames(file)).toBeLessThan(DEFAULT_MIN_FRAMES);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(true);
    expect(fileAlone(file, 'SELECT count(*) FROM farm_current')).toBe(11);
    expect(fileAlone(file, 'SELECT count(*) FROM event_log')).toBe(11);
    reader.close();
  });

  it('no thread for a database without a WAL', () => {
    const store = openPrimaryStore({ file: ':memory:' });
    expect(store.checkpointer).toBeUndefined();
  });
});
