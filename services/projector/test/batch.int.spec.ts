import { rmSync } from 'node:fs';
import { openProjectionStore, type SqliteProjectionStore } from '@eggmesh/store-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Batch } from '../src/index.js';
import { tempDir } from './helpers.js';

// The batch overlay over a real (committed) projection store.
describe('Batch', () => {
  let dir: string;
  let store: SqliteProjectionStore;

  beforeEach(() => {
    dir = tempDir('eggmesh-batch-');
    store = openProjectionStore({ dir });
    store.commitSync({
      expectedCheckpoint: 0,
      checkpoint: 3,
      documents: [
        {
          entity: 'farm_output',
          id: 'f1',
          payload: { farm_id: 'f1', total_hens: 2 },
          live: true,
          createdAt: 10,
        },
        {
          entity: 'farm_output',
          id: 'f2',
          payload: { farm_id: 'f2', total_hens: 0 },
          live: false,
          createdAt: 11,
        },
      ],
      state: [
        { kind: 'hen', id: 'h1', value: { coop_id: 'c1' }, ref: 'c1' },
        { kind: 'hen', id: 'h2', value: { coop_id: 'c1' }, ref: 'c1' },
        { kind: 'hen', id: 'h3', value: { coop_id: 'c2' }, ref: 'c2' },
      ],
    });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

  it('reads committed documents (tombstones too) and its own writes; a write at the same time replaces', () => {
    const batch = new Batch(store);
    expect(batch.document('farm_output', 'f1')).toEqual({
      id: 'f1',
      live: true,
      payload: { farm_id: 'f1', total_hens: 2 },
    });
    expect(batch.document('farm_output', 'f2')?.live).toBe(false);
    expect(batch.document('farm_output', 'nope')).toBeNull();
    batch.putDocument('farm_output', 'f1', { farm_id: 'f1', total_hens: 3 }, true, 20);
    batch.putDocument('farm_output', 'f2', { farm_id: 'f2', total_hens: 1 }, false, 20);
    batch.putDocument('farm_output', 'f1', { farm_id: 'f1', total_hens: 4 }, true, 20);
    batch.putDocument('farm_output', 'f1', { farm_id: 'f1', total_hens: 5 }, false, 21);
    expect(batch.document('farm_output', 'f1')).toEqual({
      id: 'f1',
      live: false,
      payload: { farm_id: 'f1', total_hens: 5 },
    });
    expect(batch.writes()).toEqual([
      {
        entity: 'farm_output',
        id: 'f1',
        payload: { farm_id: 'f1', total_hens: 4 },
        live: true,
        createdAt: 20,
      },
      {
        entity: 'farm_output',
        id: 'f2',
        payload: { farm_id: 'f2', total_hens: 1 },
        live: false,
        createdAt: 20,
      },
      {
        entity: 'farm_output',
        id: 'f1',
        payload: { farm_id: 'f1', total_hens: 5 },
        live: false,
        createdAt: 21,
      },
    ]);
    // Nothing reaches the store before the commit.
    expect(store.loadDocumentsSync('farm_output', ['f1']).get('f1')?.payload).toEqual({
      farm_id: 'f1',
      total_hens: 2,
    });
  });

  it('lists state rows by ref as of its own changes', () => {
    const batch = new Batch(store);
    expect(ids(batch.stateByRef('hen', 'c1'))).toEqual(['h1', 'h2']);
    batch.putState('hen', 'h1', { coop_id: 'c2' }, 'c2');
    batch.putState('hen', 'h4', { coop_id: 'c1' }, 'c1');
    batch.putState('hen', 'h3', { coop_id: null }, null);
    expect(ids(batch.stateByRef('hen', 'c1'))).toEqual(['h2', 'h4']);
    expect(ids(batch.stateByRef('hen', 'c2'))).toEqual(['h1']);
    batch.putState('hen', 'h1', { coop_id: 'c1' }, 'c1');
    expect(ids(batch.stateByRef('hen', 'c1'))).toEqual(['h1', 'h2', 'h4']);
    expect(ids(batch.stateByRef('hen', 'c2'))).toEqual([]);
    expect(batch.stateByRef('hen', 'c1').find((r) => r.id === 'h1')?.value).toEqual({ coop_id: 'c1' });
    expect(ids(batch.stateWrites())).toEqual(['h1', 'h3', 'h4']);
  });

  it('still lists a committed row it has only read', () => {
    const batch = new Batch(store);
    expect(batch.stateRow('hen', 'h2')?.value).toEqual({ coop_id: 'c1' });
    expect(ids(batch.stateByRef('hen', 'c1'))).toEqual(['h1', 'h2']);
    expect(batch.stateWrites()).toEqual([]);
  });
});
