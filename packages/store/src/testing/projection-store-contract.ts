import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isStoreError, storeErrorCodes } from '../errors.js';
import {
  type LoadedProjections,
  type ProjectionCommit,
  type ProjectionKeys,
  type ProjectionStateRow,
  type ProjectionStore,
  type ProjectionWrite,
  projectionKey,
} from '../projection-store.js';

export interface ProjectionStoreHarness {
  /** A fresh, empty projection store (checkpoint 0). */
  open(): Promise<ProjectionStore>;
  /** Called after each test with the store it opened (after `close()`). */
  dispose?(store: ProjectionStore): Promise<void>;
}

const doc = (id: string, total_hens: number, createdAt: number, live = true): ProjectionWrite => ({
  entity: 'farm_output',
  id,
  payload: { farm_id: id, total_hens },
  live,
  createdAt,
});
const hen = (id: string, coop: string | null): ProjectionStateRow => ({
  kind: 'hen',
  id,
  value: { coop_id: coop, live: true },
  ref: coop,
});
const keys = (over: Partial<ProjectionKeys>): ProjectionKeys => ({
  documents: [],
  state: [],
  stateByRef: [],
  ...over,
});
const batch = (
  expectedCheckpoint: number,
  checkpoint: number,
  over: Partial<ProjectionCommit>,
): ProjectionCommit => ({
  expectedCheckpoint,
  checkpoint,
  documents: [],
  state: [],
  ...over,
});
const ids = (rows: readonly ProjectionStateRow[] | undefined) => (rows ?? []).map((r) => r.id).sort();

/** The behaviour every ProjectionStore adapter must show. Call inside a test file of the adapter. */
export function runProjectionStoreContract(name: string, harness: ProjectionStoreHarness): void {
  describe(`ProjectionStore contract: ${name}`, () => {
    let store: ProjectionStore;
    const everything = keys({
      documents: [
        { entity: 'farm_output', id: 'f1' },
        { entity: 'farm_output', id: 'f2' },
        { entity: 'hen_productivity', id: 'f1' },
      ],
      state: [
        { kind: 'hen', id: 'h1' },
        { kind: 'hen', id: 'h2' },
        { kind: 'coop', id: 'h1' },
      ],
      stateByRef: [
        { kind: 'hen', ref: 'c1' },
        { kind: 'hen', ref: 'c2' },
        { kind: 'coop', ref: 'c1' },
      ],
    });
    const load = (): Promise<LoadedProjections> => store.load(everything);

    beforeEach(async () => {
      store = await harness.open();
    });
    afterEach(async () => {
      await store.close();
      await harness.dispose?.(store);
    });

    it('starts at checkpoint 0; absent keys are missing and every asked ref has an empty list', async () => {
      expect(await store.checkpoint()).toBe(0);
      const loaded = await load();
      expect(loaded.checkpoint).toBe(0);
      expect(loaded.documents.size).toBe(0);
      expect(loaded.state.size).toBe(0);
      expect([...loaded.stateByRef.keys()].sort()).toEqual(
        [projectionKey('hen', 'c1'), projectionKey('hen', 'c2'), projectionKey('coop', 'c1')].sort(),
      );
      for (const rows of loaded.stateByRef.values()) expect(rows).toEqual([]);
      const none = await store.load(keys({}));
      expect(none.checkpoint).toBe(0);
    });

    it('commits documents, state and the checkpoint, and loads them back in one call', async () => {
      await store.commit(
        batch(0, 7, {
          documents: [doc('f1', 2, 100), doc('f2', 0, 100, false)],
          state: [hen('h1', 'c1'), hen('h2', 'c1'), hen('h3', 'c2')],
        }),
      );
      expect(await store.checkpoint()).toBe(7);
      const loaded = await load();
      expect(loaded.checkpoint).toBe(7);
      expect(loaded.documents.get(projectionKey('farm_output', 'f1'))).toEqual({
        id: 'f1',
        live: true,
        payload: { farm_id: 'f1', total_hens: 2 },
      });
      // A tombstone loads too: its counters live on.
      expect(loaded.documents.get(projectionKey('farm_output', 'f2'))).toMatchObject({ live: false });
      expect(loaded.documents.has(projectionKey('hen_productivity', 'f1'))).toBe(false);
      expect(loaded.state.get(projectionKey('hen', 'h1'))).toEqual(hen('h1', 'c1'));
      expect(loaded.state.has(projectionKey('coop', 'h1'))).toBe(false);
      expect(ids(loaded.stateByRef.get(projectionKey('hen', 'c1')))).toEqual(['h1', 'h2']);
      expect(ids(loaded.stateByRef.get(projectionKey('hen', 'c2')))).toEqual(['h3']);
      expect(loaded.stateByRef.get(projectionKey('coop', 'c1'))).toEqual([]);
    });

    it('stores what a write object exposes, accessors included (not only its own data fields)', async () => {
      // A writer may hand its versions as class instances whose payload is computed on first use.
      class Version implements ProjectionWrite {
        readonly entity = 'farm_output' as const;
        constructor(
          readonly id: string,
          private readonly hens: number,
          readonly createdAt: number,
        ) {}
        get live() {
          return true;
        }
        get payload() {
          return { farm_id: this.id, total_hens: this.hens };
        }
      }
      await store.commit(batch(0, 3, { documents: [new Version('f1', 4, 100), new Version('f2', 5, 100)] }));
      const loaded = await load();
      expect(loaded.documents.get(projectionKey('farm_output', 'f1'))).toEqual({
        id: 'f1',
        live: true,
        payload: { farm_id: 'f1', total_hens: 4 },
      });
      expect(loaded.documents.get(projectionKey('farm_output', 'f2'))?.payload).toEqual({
        farm_id: 'f2',
        total_hens: 5,
      });
    });

    it('loads the newest version of a document, within a commit and across commits', async () => {
      await store.commit(batch(0, 1, { documents: [doc('f1', 1, 100), doc('f1', 2, 101)] }));
      expect((await load()).documents.get(projectionKey('farm_output', 'f1'))?.payload.total_hens).toBe(2);
      await store.commit(batch(1, 2, { documents: [doc('f1', 3, 102, false)] }));
      expect((await load()).documents.get(projectionKey('farm_output', 'f1'))).toMatchObject({
        live: false,
        payload: { total_hens: 3 },
      });
      // A version at a time already written replaces that version.
      await store.commit(batch(2, 3, { documents: [doc('f1', 4, 102)] }));
      expect((await load()).documents.get(projectionKey('farm_output', 'f1'))).toMatchObject({
        live: true,
        payload: { total_hens: 4 },
      });
    });

    it('moves a state row between refs and replaces its value', async () => {
      await store.commit(batch(0, 1, { state: [hen('h1', 'c1'), hen('h2', 'c1')] }));
      await store.commit(batch(1, 2, { state: [hen('h1', 'c2'), hen('h2', null)] }));
      const loaded = await load();
      expect(ids(loaded.stateByRef.get(projectionKey('hen', 'c1')))).toEqual([]);
      expect(ids(loaded.stateByRef.get(projectionKey('hen', 'c2')))).toEqual(['h1']);
      expect(loaded.state.get(projectionKey('hen', 'h2'))).toEqual(hen('h2', null));
    });

    it('refuses a commit from a stale checkpoint with CONFLICT and writes nothing of it', async () => {
      await store.commit(batch(0, 5, { documents: [doc('f1', 1, 100)], state: [hen('h1', 'c1')] }));
      const stale = await store
        .commit(batch(0, 9, { documents: [doc('f1', 99, 200), doc('f2', 1, 200)], state: [hen('h1', 'c2')] }))
        .catch((e: unknown) => e);
      expect(isStoreError(stale, storeErrorCodes.CONFLICT)).toBe(true);
      const ahead = await store
        .commit(batch(6, 9, { documents: [doc('f2', 1, 200)] }))
        .catch((e: unknown) => e);
      expect(isStoreError(ahead, storeErrorCodes.CONFLICT)).toBe(true);
      expect(await store.checkpoint()).toBe(5);
      const loaded = await load();
      expect(loaded.documents.get(projectionKey('farm_output', 'f1'))?.payload.total_hens).toBe(1);
      expect(loaded.documents.has(projectionKey('farm_output', 'f2'))).toBe(false);
      expect(ids(loaded.stateByRef.get(projectionKey('hen', 'c1')))).toEqual(['h1']);
      // The store goes on from the checkpoint it holds.
      await store.commit(batch(5, 6, { documents: [doc('f2', 1, 300)] }));
      expect(await store.checkpoint()).toBe(6);
    });

    it('lets exactly one of two commits from the same checkpoint win', async () => {
      const results = await Promise.allSettled([
        store.commit(batch(0, 3, { documents: [doc('f1', 1, 100)] })),
        store.commit(batch(0, 4, { documents: [doc('f1', 2, 100)] })),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const failed = results.find((r) => r.status === 'rejected');
      expect(failed?.status === 'rejected' && isStoreError(failed.reason, storeErrorCodes.CONFLICT)).toBe(
        true,
      );
      const checkpoint = await store.checkpoint();
      const total = (await load()).documents.get(projectionKey('farm_output', 'f1'))?.payload.total_hens;
      expect([checkpoint, total]).toEqual(checkpoint === 3 ? [3, 1] : [4, 2]);
    });
  });
}
