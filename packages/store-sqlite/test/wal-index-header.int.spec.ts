import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataFiles, openDatabase, type SqliteDatabase, WalIndexHeader } from '@eggmesh/store-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { farm, openReadFixture, type ReadFixture } from './read-fixture.js';

/** A statement run by a separate Node process on `file` (its own SQLite, its own locks and mapping). */
function inAnotherProcess(file: string, sql: string): void {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const script = `const Database = require(${JSON.stringify(driver)});
    const db = new Database(${JSON.stringify(file)});
    db.pragma('busy_timeout = 5000');
    db.exec(${JSON.stringify(sql)});
    db.close();`;
  execFileSync(process.execPath, ['-e', script], { stdio: 'pipe' });
}

describe('WalIndexHeader: whether anyone committed since the last look, from the -shm file', () => {
  let dir: string;
  let file: string;
  let writer: SqliteDatabase;
  let reader: SqliteDatabase;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eggmesh-wal-header-'));
    file = join(dir, 'db.sqlite');
    writer = openDatabase(file);
    writer.exec('CREATE TABLE t (v INTEGER)');
    reader = openDatabase(file, { readonly: true });
    reader.prepare('SELECT count(*) FROM t').get();
  });
  afterEach(() => {
    reader.close();
    if (writer.open) writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says unchanged only after a first read, and changed after every commit, by this or another process', () => {
    const header = new WalIndexHeader(file);
    expect(header.unchanged()).toBe(false);
    expect(header.unchanged()).toBe(true);
    expect(header.unchanged()).toBe(true);
    writer.exec('INSERT INTO t VALUES (1)');
    expect(header.unchanged()).toBe(false);
    expect(header.unchanged()).toBe(true);
    // The same row written again: the file's bytes may repeat, the header does not.
    writer.exec('DELETE FROM t; INSERT INTO t VALUES (1)');
    expect(header.unchanged()).toBe(false);
    inAnotherProcess(file, 'INSERT INTO t VALUES (2)');
    expect(header.unchanged()).toBe(false);
    expect(header.unchanged()).toBe(true);
    header.close();
  });

  it('says changed after a checkpoint empties the WAL and a commit starts it again', () => {
    const header = new WalIndexHeader(file);
    header.unchanged();
    writer.exec('INSERT INTO t VALUES (1)');
    expect(header.unchanged()).toBe(false);
    writer.pragma('wal_checkpoint(TRUNCATE)');
    header.unchanged();
    writer.exec('INSERT INTO t VALUES (1)');
    expect(header.unchanged()).toBe(false);
    header.close();
  });

  it('finds the -shm file of a database opened through a symbolic link', () => {
    const link = join(dir, 'link.sqlite');
    symlinkSync(file, link);
    const header = new WalIndexHeader(link);
    header.unchanged();
    expect(header.unchanged()).toBe(true);
    writer.exec('INSERT INTO t VALUES (3)');
    expect(header.unchanged()).toBe(false);
    header.close();
  });

  it("reads the WAL's length: each commit's frames, 0 after a truncating checkpoint, none without a file", () => {
    const header = new WalIndexHeader(file);
    const start = header.lastFrame()!;
    expect(start).toBeGreaterThanOrEqual(1);
    writer.exec('INSERT INTO t VALUES (1)');
    const one = header.lastFrame()!;
    expect(one).toBeGreaterThan(start);
    // 2,000 rows take several more pages, each a frame of this one transaction.
    writer.exec(
      `INSERT INTO t SELECT value FROM json_each('[${Array.from({ length: 2000 }, (_, i) => i)}]')`,
    );
    expect(header.lastFrame()).toBeGreaterThan(one + 2);
    writer.pragma('wal_checkpoint(TRUNCATE)');
    expect(header.lastFrame()).toBe(0);
    expect(new WalIndexHeader(join(dir, 'none.sqlite')).lastFrame()).toBeUndefined();
    header.close();
    expect(header.lastFrame()).toBeUndefined();
  });

  it('always says "look" without a -shm file, after forget() and once closed', () => {
    const missing = new WalIndexHeader(join(dir, 'none.sqlite'));
    expect(missing.unchanged()).toBe(false);
    expect(missing.unchanged()).toBe(false);
    const header = new WalIndexHeader(file);
    header.unchanged();
    header.forget();
    expect(header.unchanged()).toBe(false);
    expect(header.unchanged()).toBe(true);
    header.close();
    expect(header.unchanged()).toBe(false);
  });
});

describe('the read memo looks at the data version only when the wal-index header moved', () => {
  let now: number;
  let fixture: ReadFixture;
  beforeEach(() => {
    now = 1_000;
    fixture = openReadFixture('eggmesh-memo-looks-', () => now);
  });
  afterEach(() => fixture.close());

  it('serves repeated reads without a look, and sees a commit by another process at the next read', async () => {
    const { writer, read, dir } = fixture;
    const memo = read.primary.sync.memo!;
    const f = randomUUID();
    await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('a') }]);
    const first = await read.get('farm', f);
    expect(first?.payload.name).toBe('a');
    const looks = memo.looks;
    for (let i = 0; i < 5; i++) expect(await read.get('farm', f)).toBe(first);
    expect(memo.looks).toBe(looks);

    // Another process renames the farm through SQL of its own (a new version and its log entry).
    now += 10;
    const file = dataFiles(dir).primary;
    const renamed = JSON.stringify(farm('b')).replaceAll("'", "''");
    inAnotherProcess(
      file,
      `BEGIN IMMEDIATE;
       INSERT INTO farm_versions (id, created_at, deleted, payload) VALUES ('${f}', ${now}, 0, '${renamed}');
       UPDATE farm_current SET version = last_insert_rowid(), created_at = ${now} WHERE id = '${f}';
       INSERT INTO event_log (entity, entity_id, op, version, previous_version, created_at)
         SELECT 'farm', '${f}', 'update', version, NULL, ${now} FROM farm_current WHERE id = '${f}';
       COMMIT;`,
    );
    expect((await read.get('farm', f))?.payload.name).toBe('b');
    expect(memo.looks).toBe(looks + 1);
  });

  it('looks ahead of the next read on refresh(), so that read finds the look done', async () => {
    const { writer, read } = fixture;
    const memo = read.primary.sync.memo!;
    const f = randomUUID();
    await writer.commit([{ op: 'create', entity: 'farm', id: f, payload: farm('a') }]);
    expect((await read.get('farm', f))?.payload.name).toBe('a');
    const looks = memo.looks;
    // Nothing committed since: no look.
    read.refresh();
    expect(memo.looks).toBe(looks);
    now += 10;
    await writer.commit([{ op: 'update', entity: 'farm', id: f, payload: farm('b') }]);
    read.refresh();
    expect(memo.looks).toBe(looks + 1);
    // The read after it: the new version, without a look of its own.
    expect((await read.get('farm', f))?.payload.name).toBe('b');
    expect(memo.looks).toBe(looks + 1);
  });
});
