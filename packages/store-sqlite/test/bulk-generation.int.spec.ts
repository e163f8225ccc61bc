import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProjectionStore, ProjectionWrite } from '@eggmesh/store';
import {
  openBulkProjectionStore,
  openDatabase,
  openProjectionStore,
  ProjectionReader,
  promoteGeneration,
} from '@eggmesh/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-bulk-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Batches of hen versions: 150 ids (more than one multi-row INSERT), several versions each, some at the same time, some tombstones. */
function batches(): ProjectionWrite[][] {
  const out: ProjectionWrite[][] = [];
  for (let b = 0; b < 4; b++) {
    const docs: ProjectionWrite[] = [];
    for (let i = 149; i >= 0; i--) {
      const id = `hen-${String(i).padStart(3, '0')}`;
      for (let v = 0; v < 2; v++) {
        // Two versions per batch; ids divisible by 7 write their second one at the first one's time.
        const createdAt = 1000 * b + (i % 7 === 0 ? 0 : v) + 1;
        const live = !(b === 3 && i % 5 === 0);
        docs.push({
          entity: 'hen_productivity',
          id,
          createdAt,
          live,
          payload: { hen_id: id, total_eggs: b * 10 + v },
        });
      }
    }
    out.push(docs);
  }
  return out;
}

const GENERATION = 'gen-000000000000001.db';

/** Commits `batches()` to `store`, one commit per batch. */
async function fill(store: ProjectionStore): Promise<void> {
  let checkpoint = 0;
  for (const documents of batches()) {
    await store.commit({ expectedCheckpoint: checkpoint, checkpoint: checkpoint + 1, documents, state: [] });
    checkpoint += 1;
  }
}

describe('a bulk-built generation (what a rebuild writes)', () => {
  it('holds the same versions and current rows as one built batch by batch, and ends as a WAL file', async () => {
    const plain = openProjectionStore({ dir: tempDir(), generation: GENERATION });
    await fill(plain);
    const bulkDir = tempDir();
    const building = openBulkProjectionStore({ dir: bulkDir, generation: GENERATION });
    await fill(building);
    const bulk = await building.finish();
    expect(bulk.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(bulk.db.pragma('synchronous', { simple: true })).toBe(1);

    const versions =
      'SELECT id, created_at, deleted, payload FROM hen_productivity_versions ORDER BY id, created_at';
    const current = 'SELECT id, created_at, payload FROM hen_productivity_current ORDER BY id';
    const plainVersions = plain.db.prepare(versions).all();
    expect(plainVersions.length).toBeGreaterThan(600);
    expect(bulk.db.prepare(versions).all()).toEqual(plainVersions);
    const plainCurrent = plain.db.prepare(current).all();
    expect(plainCurrent).toHaveLength(120);
    expect(bulk.db.prepare(current).all()).toEqual(plainCurrent);

    // `at` reads see each batch's versions exactly.
    for (const at of [1, 2, 1001, 2002, 3001]) {
      for (const id of ['hen-000', 'hen-001', 'hen-005']) {
        expect(await bulk.get('hen_productivity', id, { at })).toEqual(
          await plain.get('hen_productivity', id, { at }),
        );
      }
    }
    await plain.close();

    // Promoted, it serves readers while the projector keeps writing to it.
    promoteGeneration(bulkDir, bulk.generation);
    const reader = new ProjectionReader(bulkDir, 0);
    expect(reader.checkpoint()).toBe(4);
    await bulk.commit({ expectedCheckpoint: 4, checkpoint: 5, documents: [], state: [] });
    expect(reader.checkpoint()).toBe(5);
    reader.close();
    await bulk.close();
    const again = openDatabase(join(bulkDir, bulk.generation), { readonly: true });
    expect(again.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(again.pragma('integrity_check', { simple: true })).toBe('ok');
    again.close();
  });
});
