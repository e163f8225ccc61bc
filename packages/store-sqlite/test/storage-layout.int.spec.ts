// Each payload is stored once (issue 11): the log and the current rows refer to version rows.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EntityName, entities } from '@eggmesh/schema';
import type { LogEntry, PrimaryStore, StoredRecord, WriteOperation } from '@eggmesh/store';
import {
  openDatabase,
  openPrimaryStore,
  openProjectionStore,
  primaryEntities,
  type SqlitePrimaryStore,
} from '@eggmesh/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { VersionTables } from '../src/version-tables.js';

const dirs: string[] = [];
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-layout-'));
  dirs.push(dir);
  return join(dir, 'primary.db');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The database file plus its WAL, after folding the WAL into the file. */
const bytesOf = async (store: SqlitePrimaryStore, file: string): Promise<number> => {
  const [result] = store.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
  expect(result?.busy).toBe(0);
  const dir = join(file, '..');
  return readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
};

describe('page cache per connection', () => {
  // The live projector keeps its documents decoded in its own cache; SQLite's cache over a growing
  // generation only held written pages, and at 64 MiB the soak saw its RSS climb for 7 minutes
  // (perf/README.md, round 12). The write-api keeps 64 MiB for its random-key index inserts.
  it("the write-api's primary keeps 64 MiB, the live projector's generation 16 MiB", async () => {
    const file = tempFile();
    const primary = openPrimaryStore({ file });
    const projections = openProjectionStore({ dir: join(file, '..', 'projections') });
    try {
      expect(primary.db.pragma('cache_size', { simple: true })).toBe(-65536);
      expect(projections.db.pragma('cache_size', { simple: true })).toBe(-16384);
    } finally {
      await projections.close();
      await primary.close();
    }
  });
});

const farm = (name: string) => ({ name, farm_type: 'homestead', zone: 'north' });
const big = (i: number, bytes: number) => ({ ...farm(`farm ${i} `.padEnd(bytes, 'x')) });

describe('file growth per write', () => {
  it('100 PUTs of 100 KB add about 100 × 100 KB (once, not three times)', async () => {
    const file = tempFile();
    const store = openPrimaryStore({ file });
    const id = randomUUID();
    const payloadBytes = 100_000;
    store.commitSync([{ op: 'create', entity: 'farm', id, payload: big(0, payloadBytes) }]);
    const before = await bytesOf(store, file);
    for (let i = 1; i <= 100; i++) {
      store.commitSync([{ op: 'update', entity: 'farm', id, payload: big(i, payloadBytes) }]);
    }
    const perPut = ((await bytesOf(store, file)) - before) / 100;
    // A version row spills into overflow pages: some slack above the payload, never a second copy.
    expect(perPut).toBeGreaterThan(payloadBytes * 0.95);
    expect(perPut).toBeLessThan(payloadBytes * 1.25);
    // Every version is kept: the first one is still readable `at` its time, and the log has them all.
    const first = store.readLogSync(0, 1)[0]!;
    expect(store.sync.get('farm', id, { at: first.createdAt })?.payload).toEqual(big(0, payloadBytes));
    const log = store.readLogSync(0, 1000);
    expect(log).toHaveLength(101);
    expect(log[100]!.previous).toEqual(big(99, payloadBytes));
    expect(log[100]!.payload).toEqual(big(100, payloadBytes));
    void store.close();
  });

  it('a small write costs its payload plus a few hundred bytes of keys', async () => {
    const file = tempFile();
    const store = openPrimaryStore({ file });
    const ids = Array.from({ length: 2000 }, () => randomUUID());
    store.commitSync(
      ids.slice(0, 1000).map((id) => ({ op: 'create', entity: 'farm', id, payload: farm(id) })),
    );
    const before = await bytesOf(store, file);
    const payload = JSON.stringify({ ...farm(ids[1000]!) }).length;
    store.commitSync(ids.slice(1000).map((id) => ({ op: 'create', entity: 'farm', id, payload: farm(id) })));
    const perWrite = ((await bytesOf(store, file)) - before) / 1000;
    // Version row (payload + id + time) and its indexes, current row, log row: under 1 KB for an 85-byte payload.
    expect(perWrite).toBeGreaterThan(payload);
    expect(perWrite).toBeLessThan(payload + 800);
    void store.close();
  });
});

// ------------------------------------------------------------------------------------------------
// Files of the first layout (payload copied into event_log and <entity>_current) are migrated.
// ------------------------------------------------------------------------------------------------

const LEGACY_LOG_DDL = `
CREATE TABLE IF NOT EXISTS event_log (
  position INTEGER PRIMARY KEY, entity TEXT NOT NULL, entity_id TEXT NOT NULL, op TEXT NOT NULL,
  payload TEXT, previous TEXT, created_at INTEGER NOT NULL
);`;

/** Writes `entries` the way the first layout did: versions, inline current rows, payload copies in the log. */
function writeLegacyFile(file: string, entries: readonly LogEntry[]): void {
  const db = openDatabase(file);
  db.exec(VersionTables.ddl(primaryEntities, 'inline') + LEGACY_LOG_DDL);
  const tables = new VersionTables(db, primaryEntities, true, 'inline');
  const log = db.prepare(
    'INSERT INTO event_log (position, entity, entity_id, op, payload, previous, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (const e of entries) {
      const payload = e.payload === null ? null : JSON.stringify(e.payload);
      tables.write(e.entity, e.id, e.createdAt, payload, e.op !== 'delete');
      const previous = e.previous === null ? null : JSON.stringify(e.previous);
      log.run(e.position, e.entity, e.id, e.op, payload, previous, e.createdAt);
    }
  })();
  db.close();
}

/** Every read the port offers, over everything `entries` touched. */
async function snapshot(store: PrimaryStore, entries: readonly LogEntry[]) {
  const ids = [...new Set(entries.map((e) => `${e.entity}/${e.id}`))];
  const times = [...new Set(entries.map((e) => e.createdAt))];
  const out: Record<string, unknown> = {
    log: await store.log.read(0, 1_000_000),
    head: await store.log.head(),
  };
  for (const entity of ['farm', 'coop', 'lay_report'] as EntityName[]) {
    for (const at of [undefined, ...times]) {
      out[`list ${entity} ${at}`] = await store.list(entity, { limit: 1000, at });
      for (const field of entities[entity].indexedFields) {
        const values = entries
          .filter((e) => e.entity === entity)
          .map((e) => String((e.payload ?? e.previous)?.[field]));
        out[`findByAny ${entity}.${field} ${at}`] = sortById(
          await store.findByAny(entity, field, values, { at }),
        );
        for (const value of new Set(values)) {
          out[`findBy ${entity}.${field}=${value} ${at}`] = await store.findBy(entity, field, value, {
            limit: 1000,
            at,
          });
        }
      }
    }
  }
  for (const key of ids) {
    const [entity, id] = key.split('/') as [EntityName, string];
    for (const at of [undefined, ...times]) out[`get ${key} ${at}`] = await store.get(entity, id, { at });
  }
  return out;
}
const sortById = (rows: StoredRecord[]) =>
  [...rows].sort((a, b) => a.id.localeCompare(b.id) || a.createdAt - b.createdAt);

describe('migration of first-layout files', () => {
  async function history(): Promise<{ entries: LogEntry[]; expected: Record<string, unknown> }> {
    let now = 1_000_000;
    const store = openPrimaryStore({ file: tempFile(), clock: () => (now += 10) });
    const [f1, f2, c1, l1] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const ops: WriteOperation[][] = [
      [
        { op: 'create', entity: 'farm', id: f1, payload: { ...farm('one'), zone: 'east' } },
        { op: 'create', entity: 'farm', id: f2, payload: farm('two') },
      ],
      [
        {
          op: 'create',
          entity: 'coop',
          id: c1,
          payload: { name: 'c', farm_id: f1, capacity: 3, coop_type: 'barn' },
        },
      ],
      [{ op: 'update', entity: 'farm', id: f1, payload: { ...farm('one b'), zone: 'west' } }],
      [
        {
          op: 'update',
          entity: 'coop',
          id: c1,
          payload: { name: 'c', farm_id: f2, capacity: 4, coop_type: 'barn' },
        },
      ],
      [{ op: 'delete', entity: 'farm', id: f2 }],
      [
        {
          op: 'create',
          entity: 'lay_report',
          id: l1,
          payload: {
            hen_id: randomUUID(),
            coop_id: c1,
            farm_id: f1,
            eggs: 2,
            timestamp: '2026-01-01T00:00:00Z',
          },
        },
      ],
      [{ op: 'create', entity: 'farm', id: f2, payload: farm('two again') }],
      [{ op: 'delete', entity: 'lay_report', id: l1 }],
    ];
    for (const batch of ops) store.commitSync(batch);
    const entries = store.readLogSync(0, 1000);
    const expected = await snapshot(store, entries);
    await store.close();
    return { entries, expected };
  }

  it('opening a first-layout file for writing migrates it; every read and the log stay identical', async () => {
    const { entries, expected } = await history();
    expect(entries.some((e) => e.op === 'delete')).toBe(true);
    const file = tempFile();
    writeLegacyFile(file, entries);
    const store = openPrimaryStore({ file });
    expect(store.db.pragma('user_version', { simple: true })).toBe(2);
    const logColumns = store.db.prepare("SELECT name FROM pragma_table_info('event_log')").pluck().all();
    expect(logColumns).not.toContain('payload');
    expect(await snapshot(store, entries)).toEqual(expected);
    // Writes go on from the migrated head.
    const result = await store.commit([
      { op: 'create', entity: 'farm', id: randomUUID(), payload: farm('new') },
    ]);
    expect(result.position).toBe(entries.length + 1);
    await store.close();
    // A second open finds the current layout and changes nothing.
    const again = openPrimaryStore({ file });
    expect((await again.log.read(0, 1000)).slice(0, entries.length)).toEqual(expected.log);
    await again.close();
  });

  it('a read-only open of a first-layout file is refused, telling what to do', async () => {
    const { entries } = await history();
    const file = tempFile();
    writeLegacyFile(file, entries);
    expect(() => openPrimaryStore({ file, readonly: true })).toThrow(/old storage layout.*write-api/);
  });

  it('VACUUM after the migration gives the payload copies back', async () => {
    const file = tempFile();
    let now = 1_000_000;
    const store = openPrimaryStore({ file, clock: () => (now += 1) });
    const id = randomUUID();
    store.commitSync([{ op: 'create', entity: 'farm', id, payload: big(0, 20_000) }]);
    for (let i = 1; i < 50; i++)
      store.commitSync([{ op: 'update', entity: 'farm', id, payload: big(i, 20_000) }]);
    const entries = store.readLogSync(0, 1000);
    await store.close();
    const legacy = tempFile();
    writeLegacyFile(legacy, entries);
    const migrated = openPrimaryStore({ file: legacy });
    const legacyBytes = await bytesOf(migrated, legacy);
    migrated.db.exec('VACUUM');
    const vacuumed = await bytesOf(migrated, legacy);
    // The first layout held each payload three times; after VACUUM once.
    expect(vacuumed).toBeLessThan(legacyBytes / 2);
    expect(migrated.readLogSync(0, 1000)).toEqual(entries);
    await migrated.close();
  });
});
