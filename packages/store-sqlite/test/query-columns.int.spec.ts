import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entities } from '@eggmesh/schema';
import { openDatabase, openPrimaryStore, openReadStore } from '@eggmesh/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('query columns on SQLite', () => {
  it('every query field has an index on the current rows and on the versions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-qcol-'));
    dirs.push(dir);
    const store = openPrimaryStore({ file: join(dir, 'primary.db') });
    const indexed = (table: string) =>
      new Set(
        (store.db.prepare(`SELECT name FROM pragma_index_list('${table}')`).pluck().all() as string[]).map(
          (index) =>
            store.db.prepare(`SELECT name FROM pragma_index_info('${index}') WHERE seqno = 0`).pluck().get(),
        ),
      );
    for (const entity of ['hen', 'lay_report', 'coop'] as const) {
      for (const field of Object.keys(entities[entity].queryFields)) {
        expect(indexed(`${entity}_current`), `${entity}_current.${field}`).toContain(field);
        expect(indexed(`${entity}_versions`), `${entity}_versions.${field}`).toContain(field);
      }
    }
    await store.close();
  });

  it('a file written before a field was queryable gets its column, filled, and its index when opened for writing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-qcol-'));
    dirs.push(dir);
    const file = join(dir, 'primary.db');
    const store = openPrimaryStore({ file });
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await store.commit(
      ids.map((id, i) => ({
        op: 'create' as const,
        entity: 'hen' as const,
        id,
        payload: { name: `h${i}`, coop_id: randomUUID(), breed: i === 1 ? 'silkie' : 'leghorn' },
      })),
    );
    await store.close();
    // The file as an older eggmesh left it: no breed column, no breed index.
    const raw = openDatabase(file);
    raw.exec(`DROP INDEX hen_current_breed; DROP INDEX hen_versions_breed;
      ALTER TABLE hen_current DROP COLUMN breed; ALTER TABLE hen_versions DROP COLUMN breed;`);
    raw.close();
    await openPrimaryStore({ file }).close();
    const read = openReadStore(dir);
    const page = await read.query('hen', { first: 10, where: { breed: { eq: 'silkie' } } });
    expect(page.records.map((r) => r.id)).toEqual([ids[1]]);
    expect(page.totalCount).toBe(1);
    await read.close();
  });
});
