import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ProjectionStateRow,
  type ProjectionStore,
  type ProjectionWrite,
  projectionKey,
} from '@eggmesh/store';
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
  // A later commit writes every third id again at the time of its newest version: that version's row
  // (a tombstone for some) is replaced, across commits.
  const again: ProjectionWrite[] = [];
  for (let i = 0; i < 150; i += 3) {
    const id = `hen-${String(i).padStart(3, '0')}`;
    again.push({
      entity: 'hen_productivity',
      id,
      createdAt: 3000 + (i % 7 === 0 ? 0 : 1) + 1,
      live: true,
      payload: { hen_id: id, total_eggs: 99 },
    });
  }
  out.push(again);
  return out;
}

/** The state rows of commit `b`: hens in coops, some moving to another coop later. */
function stateRows(b: number): ProjectionStateRow[] {
  return Array.from({ length: 40 }, (_, i) => ({
    kind: 'hen',
    id: `hen-${String(i * 3 + b).padStart(3, '0')}`,
    ref: `coop-${(i + b) % 4}`,
    value: { coop_id: `coop-${(i + b) % 4}`, b },
  }));
}

const GENERATION = 'gen-000000000000001.db';

/** Commits `batches()` to `store`, one commit per batch. */
async function fill(store: ProjectionStore): Promise<void> {
  let checkpoint = 0;
  for (const documents of batches()) {
    const state = stateRows(checkpoint);
    await store.commit({ expectedCheckpoint: checkpoint, checkpoint: checkpoint + 1, documents, state });
    checkpoint += 1;
  }
}

describe('a bulk-built generation (what a rebuild writes)', () => {
  it('holds the same versions, current rows, state rows and indexes as one built batch by batch, and ends as a WAL file', async () => {
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
    // 150 ids, of which the 30 tombstoned by the fourth commit; 10 of those came back in the fifth.
    expect(plainCurrent).toHaveLength(130);
    expect(bulk.db.prepare(current).all()).toEqual(plainCurrent);
    const state = 'SELECT kind, id, value, ref FROM projector_state ORDER BY kind, id';
    const plainState = plain.db.prepare(state).all();
    expect(plainState.length).toBeGreaterThan(100);
    expect(bulk.db.prepare(state).all()).toEqual(plainState);
    // The indexes a bulk build creates at the end are there.
    const indexes = "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name";
    expect(bulk.db.prepare(indexes).all()).toEqual(plain.db.prepare(indexes).all());

    // `at` reads see each batch's versions exactly.
    for (const at of [1, 2, 1001, 2002, 3001, 3002]) {
      for (const id of ['hen-000', 'hen-001', 'hen-003', 'hen-005', 'hen-015']) {
        expect(await bulk.get('hen_productivity', id, { at })).toEqual(
          await plain.get('hen_productivity', id, { at }),
        );
      }
    }
    await plain.close();

    // Promoted, it serves readers while the projector keeps writing to it.
    promoteGeneration(bulkDir, bulk.generation);
    const reader = new ProjectionReader(bulkDir, 0);
    expect(reader.checkpoint()).toBe(5);
    await bulk.commit({ expectedCheckpoint: 5, checkpoint: 6, documents: [], state: [] });
    expect(reader.checkpoint()).toBe(6);
    reader.close();
    await bulk.close();
    const again = openDatabase(join(bulkDir, bulk.generation), { readonly: true });
    expect(again.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(again.pragma('integrity_check', { simple: true })).toBe('ok');
    again.close();
  });

  it('answers every load as of every commit handed over, written yet or not', async () => {
    const store = openBulkProjectionStore({ dir: tempDir(), generation: GENERATION });
    const farm = (id: string, n: number): ProjectionWrite => ({
      entity: 'farm_output',
      id,
      createdAt: n + 1,
      live: true,
      payload: { farm_id: id, n },
    });
    const hen = (id: string, coop: string, n: number) => ({
      kind: 'hen',
      id,
      ref: coop,
      value: { coop_id: coop, n },
    });
    for (let c = 0; c < 12; c++) {
      // Enough rows that the writer is often still at it when the next load comes.
      const filler = Array.from({ length: 2000 }, (_, i) => farm(`filler-${c}-${i}`, c));
      await store.commit({
        expectedCheckpoint: c,
        checkpoint: c + 1,
        documents: [farm(`only-${c}`, c), farm('every', c), ...filler],
        // h0 moves to coop-b in the seventh commit.
        state: c === 6 ? [hen('h6', 'coop-a', c), hen('h0', 'coop-b', c)] : [hen(`h${c}`, 'coop-a', c)],
      });
      // Written by an earlier commit only: may be read beside the writer.
      const earlier = await store.load({
        documents: c > 0 ? [{ entity: 'farm_output', id: `only-${c - 1}` }] : [],
        state: [],
        stateByRef: [],
      });
      expect(earlier.checkpoint).toBe(c + 1);
      if (c > 0)
        expect(earlier.documents.get(projectionKey('farm_output', `only-${c - 1}`))?.payload).toEqual({
          farm_id: `only-${c - 1}`,
          n: c - 1,
        });
      // Written again by the commit just handed over, and hens by coop: as of that commit.
      const newest = await store.load({
        documents: [{ entity: 'farm_output', id: 'every' }],
        state: [],
        stateByRef: [
          { kind: 'hen', ref: 'coop-a' },
          { kind: 'hen', ref: 'coop-b' },
        ],
      });
      expect(newest.checkpoint).toBe(c + 1);
      expect(newest.documents.get(projectionKey('farm_output', 'every'))?.payload).toEqual({
        farm_id: 'every',
        n: c,
      });
      const inA = Array.from({ length: c + 1 }, (_, i) => `h${i}`).filter((id) => c < 6 || id !== 'h0');
      expect(newest.stateByRef.get(projectionKey('hen', 'coop-a'))?.map((r) => r.id)).toEqual(inA.sort());
      expect(newest.stateByRef.get(projectionKey('hen', 'coop-b'))).toEqual(
        c < 6 ? [] : [{ kind: 'hen', id: 'h0', ref: 'coop-b', value: { coop_id: 'coop-b', n: 6 } }],
      );
    }
    const done = await store.finish();
    expect(done.checkpointSync()).toBe(12);
    await done.close();
  });
});
