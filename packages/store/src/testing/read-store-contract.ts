import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProjectionStore } from '../projection-store.js';
import type { ReadStore } from '../read-store.js';
import type { PrimaryStore } from '../types.js';

/** A read store over fresh, empty storage, with the writers that fill it. */
export interface ReadStoreFixture {
  readonly read: ReadStore;
  /** Writes actors and events (the replica the read store reads follows it). */
  readonly primary: PrimaryStore;
  /** Writes projections (at checkpoint 0 when opened). */
  readonly projections: ProjectionStore;
  /** Sets the clock the primary stamps versions with (epoch ms). */
  setTime(ms: number): void;
  /** Releases the fixture; the suite closes `read`, `primary` and `projections` itself. */
  dispose?(): Promise<void>;
}

export interface ReadStoreHarness {
  open(): Promise<ReadStoreFixture>;
}

const SETTLE_MS = 10_000;

/** Waits on `changed()` until `done` holds (a replica may lag the primary). */
async function eventually(read: ReadStore, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  while (!(await done())) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`the read store did not catch up within ${SETTLE_MS} ms`);
    await read.changed(Math.min(left, 200));
  }
}

const farm = (name: string, zone = 'north') => ({ name, farm_type: 'homestead', zone });

/** The behaviour every ReadStore adapter must show. Call inside a test file of the adapter. */
export function runReadStoreContract(name: string, harness: ReadStoreHarness): void {
  describe(`ReadStore contract: ${name}`, () => {
    let f: ReadStoreFixture;
    let now = 1_000_000;

    beforeEach(async () => {
      now = 1_000_000;
      f = await harness.open();
      f.setTime(now);
    });
    afterEach(async () => {
      await f.read.close();
      await f.projections.close();
      await f.primary.close();
      await f.dispose?.();
    });

    it('starts at positions 0 and answers ping', async () => {
      await f.read.ping();
      expect(await f.read.replicaPosition()).toBe(0);
      expect(await f.read.projectionPosition()).toBe(0);
      expect(await f.read.get('farm', randomUUID())).toBeNull();
    });

    it('reaches the primary position and reads entities now and at a time', async () => {
      const id = randomUUID();
      await f.primary.commit([{ op: 'create', entity: 'farm', id, payload: farm('v1') }]);
      const t1 = now;
      now += 10;
      f.setTime(now);
      const { position } = await f.primary.commit([
        { op: 'update', entity: 'farm', id, payload: farm('v2', 'south') },
      ]);
      await eventually(f.read, async () => (await f.read.replicaPosition()) >= position);
      expect(await f.read.replicaPosition()).toBe(position);
      expect((await f.read.get('farm', id))?.payload.name).toBe('v2');
      expect((await f.read.get('farm', id, { at: t1 }))?.payload.name).toBe('v1');
      expect(await f.read.get('farm', id, { at: t1 - 1 })).toBeNull();
      expect((await f.read.findBy('farm', 'zone', 'north', { limit: 10, at: t1 })).map((r) => r.id)).toEqual([
        id,
      ]);
      expect(await f.read.findBy('farm', 'zone', 'north', { limit: 10 })).toEqual([]);
      expect((await f.read.list('farm', { limit: 10 })).map((r) => r.id)).toEqual([id]);
      expect((await f.read.getMany('farm', [id, randomUUID()])).map((r) => r.id)).toEqual([id]);
    });

    it('reads projections at the projection position, now and at a time; a tombstone is hidden', async () => {
      const farmId = randomUUID();
      const out = (total_hens: number, createdAt: number, live = true) => ({
        entity: 'farm_output' as const,
        id: farmId,
        payload: { farm_id: farmId, farm_type: 'homestead', total_hens },
        live,
        createdAt,
      });
      await f.projections.commit({
        expectedCheckpoint: 0,
        checkpoint: 3,
        documents: [out(1, 100)],
        state: [],
      });
      await f.projections.commit({
        expectedCheckpoint: 3,
        checkpoint: 4,
        documents: [out(2, 200)],
        state: [],
      });
      await eventually(f.read, async () => (await f.read.projectionPosition()) >= 4);
      expect(await f.read.projectionPosition()).toBe(4);
      expect((await f.read.get('farm_output', farmId))?.payload.total_hens).toBe(2);
      expect((await f.read.get('farm_output', farmId, { at: 150 }))?.payload.total_hens).toBe(1);
      expect(await f.read.get('farm_output', farmId, { at: 99 })).toBeNull();
      expect((await f.read.findBy('farm_output', 'farm_id', farmId, { limit: 5 })).map((r) => r.id)).toEqual([
        farmId,
      ]);
      await f.projections.commit({
        expectedCheckpoint: 4,
        checkpoint: 5,
        documents: [out(2, 300, false)],
        state: [],
      });
      await eventually(f.read, async () => (await f.read.projectionPosition()) >= 5);
      expect(await f.read.get('farm_output', farmId)).toBeNull();
      expect((await f.read.get('farm_output', farmId, { at: 250 }))?.payload.total_hens).toBe(2);
    });

    it('answers the projection changes of each commit in (after, through], in commit order', async () => {
      const [a, b] = [randomUUID(), randomUUID()].sort();
      const out = (id: string, total_hens: number, createdAt: number, live = true) => ({
        entity: 'farm_output' as const,
        id,
        payload: { farm_id: id, farm_type: 'homestead', total_hens },
        live,
        createdAt,
      });
      const hen = randomUUID();
      await f.projections.commit({
        expectedCheckpoint: 0,
        checkpoint: 2,
        // Two versions of `a` in one commit: the commit's change is its newest.
        documents: [out(a as string, 1, 100), out(a as string, 2, 110), out(b as string, 5, 100)],
        state: [],
      });
      await f.projections.commit({
        expectedCheckpoint: 2,
        checkpoint: 7,
        documents: [
          out(b as string, 6, 200, false),
          { entity: 'hen_productivity', id: hen, payload: { hen_id: hen }, live: true, createdAt: 200 },
        ],
        state: [],
      });
      await eventually(f.read, async () => (await f.read.projectionPosition()) >= 7);
      const all = await f.read.projectionChanges(0, 7);
      expect(all.map((c) => [c.position, c.entity, c.id, c.live, c.payload.total_hens])).toEqual([
        [2, 'farm_output', a, true, 2],
        [2, 'farm_output', b, true, 5],
        [7, 'farm_output', b, false, 6],
        [7, 'hen_productivity', hen, true, undefined],
      ]);
      expect((await f.read.projectionChanges(2, 7)).map((c) => c.position)).toEqual([7, 7]);
      expect((await f.read.projectionChanges(0, 6)).map((c) => c.position)).toEqual([2, 2]);
      expect(await f.read.projectionChanges(7, 7)).toEqual([]);
    });

    it('changed() resolves when a write lands, long before its timeout', async () => {
      await f.read.replicaPosition();
      const woken = f.read.changed(60_000);
      await f.primary.commit([{ op: 'create', entity: 'farm', id: randomUUID(), payload: farm('x') }]);
      await woken;
      await eventually(f.read, async () => (await f.read.replicaPosition()) >= 1);
      await f.read.projectionPosition();
      const projected = f.read.changed(60_000);
      await f.projections.commit({ expectedCheckpoint: 0, checkpoint: 1, documents: [], state: [] });
      await projected;
      await eventually(f.read, async () => (await f.read.projectionPosition()) >= 1);
    });

    it('changed() ends on its timeout when nothing moves, and at once on abort', async () => {
      await f.read.replicaPosition();
      await f.read.changed(20);
      const abort = new AbortController();
      const waiting = f.read.changed(60_000, abort.signal);
      abort.abort();
      await waiting;
      expect(await f.read.replicaPosition()).toBe(0);
    });
  });
}
