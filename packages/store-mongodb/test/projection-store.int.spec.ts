import { randomUUID } from 'node:crypto';
import {
  isStoreError,
  type ProjectionCommit,
  type ProjectionWrite,
  projectionKey,
  storeErrorCodes,
} from '@eggmesh/store';
import {
  type MongoProjectionStoreOptions,
  openMongoProjectionStore,
  openMongoReadStore,
} from '@eggmesh/store-mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { dropDatabase, freshDbName, mongodbServer, mongodbUri } from './helpers.js';

const inventory = (id: string, eggs: number, createdAt: number, live = true): ProjectionWrite => ({
  entity: 'container_inventory',
  id,
  createdAt,
  live,
  payload: { container_id: id, current_eggs: eggs },
});

describe(`MongoDB projection store on ${mongodbServer()} (pending-batch commits)`, () => {
  const closers: { close(): Promise<void> }[] = [];
  let dbName = '';
  afterEach(async () => {
    for (const c of closers.splice(0)) await c.close();
    await dropDatabase(mongodbUri(), dbName);
  });
  const open = async (options: Partial<MongoProjectionStoreOptions> = {}) => {
    const store = await openMongoProjectionStore({ uri: mongodbUri(), dbName, ...options });
    closers.push(store);
    return store;
  };
  const reader = async () => {
    const store = await openMongoReadStore({ uri: mongodbUri(), dbName, wake: 'poll', pendingGraceMs: 100 });
    closers.push(store);
    return store;
  };

  it('commits documents, state and checkpoint together and loads them back in one call', async () => {
    dbName = freshDbName();
    const store = await open();
    expect(await store.checkpoint()).toBe(0);
    const [a, b] = [randomUUID(), randomUUID()];
    await store.commit({
      expectedCheckpoint: 0,
      checkpoint: 5,
      documents: [inventory(a, 1, 100), inventory(a, 3, 101), inventory(b, 7, 100)],
      state: [
        { kind: 'hen', id: 'h1', value: { coop: 'c1' }, ref: 'c1' },
        { kind: 'hen', id: 'h2', value: { coop: 'c1' }, ref: 'c1' },
        { kind: 'hen', id: 'h3', value: { coop: 'c2' }, ref: 'c2' },
      ],
    });
    expect(await store.checkpoint()).toBe(5);
    const loaded = await store.load({
      documents: [
        { entity: 'container_inventory', id: a },
        { entity: 'container_inventory', id: randomUUID() },
      ],
      state: [
        { kind: 'hen', id: 'h1' },
        { kind: 'hen', id: 'nope' },
      ],
      stateByRef: [
        { kind: 'hen', ref: 'c1' },
        { kind: 'hen', ref: 'empty' },
      ],
    });
    expect(loaded.checkpoint).toBe(5);
    expect([...loaded.documents.keys()]).toEqual([projectionKey('container_inventory', a)]);
    expect(loaded.documents.get(projectionKey('container_inventory', a))).toEqual({
      id: a,
      live: true,
      payload: { container_id: a, current_eggs: 3 },
    });
    expect(loaded.state.get(projectionKey('hen', 'h1'))).toEqual({
      kind: 'hen',
      id: 'h1',
      value: { coop: 'c1' },
      ref: 'c1',
    });
    expect(loaded.state.has(projectionKey('hen', 'nope'))).toBe(false);
    expect(loaded.stateByRef.get(projectionKey('hen', 'c1'))?.map((r) => r.id)).toEqual(['h1', 'h2']);
    expect(loaded.stateByRef.get(projectionKey('hen', 'empty'))).toEqual([]);

    // Versions are kept: `at` reads as on SQLite; a tombstone hides the document but keeps its counters.
    const read = await reader();
    expect((await read.get('container_inventory', a))?.payload.current_eggs).toBe(3);
    expect((await read.get('container_inventory', a, { at: 100 }))?.payload.current_eggs).toBe(1);
    expect(await read.get('container_inventory', a, { at: 99 })).toBeNull();
    await store.commit({
      expectedCheckpoint: 5,
      checkpoint: 6,
      documents: [inventory(a, 3, 102, false)],
      state: [],
    });
    expect(await read.get('container_inventory', a)).toBeNull();
    expect((await read.get('container_inventory', a, { at: 101 }))?.payload.current_eggs).toBe(3);
    const tomb = await store.load({
      documents: [{ entity: 'container_inventory', id: a }],
      state: [],
      stateByRef: [],
    });
    expect(tomb.documents.get(projectionKey('container_inventory', a))).toMatchObject({ live: false });
    expect(await read.projectionPosition()).toBe(6);
    expect(
      (await read.findBy('container_inventory', 'container_id', b, { limit: 10 })).map((r) => r.id),
    ).toEqual([b]);
  });

  it('refuses a batch whose expected checkpoint is stale and writes nothing of it', async () => {
    dbName = freshDbName();
    const one = await open();
    const two = await open();
    const id = randomUUID();
    await one.commit({ expectedCheckpoint: 0, checkpoint: 3, documents: [inventory(id, 1, 10)], state: [] });
    const stale: ProjectionCommit = {
      expectedCheckpoint: 0,
      checkpoint: 4,
      documents: [inventory(id, 99, 11)],
      state: [{ kind: 'k', id: 'x', value: {}, ref: null }],
    };
    const error = await two.commit(stale).catch((e: unknown) => e);
    expect(isStoreError(error, storeErrorCodes.CONFLICT)).toBe(true);
    const loaded = await two.load({
      documents: [{ entity: 'container_inventory', id }],
      state: [{ kind: 'k', id: 'x' }],
      stateByRef: [],
    });
    expect(loaded.checkpoint).toBe(3);
    expect(loaded.documents.get(projectionKey('container_inventory', id))?.payload.current_eggs).toBe(1);
    expect(loaded.state.size).toBe(0);
  });

  it('a projector that dies after the commit point leaves a batch every reader and the next open finish', async () => {
    dbName = freshDbName();
    const ids = Array.from({ length: 450 }, () => randomUUID());
    const dying = await open({
      hooks: {
        async afterBatchCommitted(checkpoint) {
          if (checkpoint === 2) throw new Error('projector died mid-batch');
        },
      },
    });
    await dying.commit({
      expectedCheckpoint: 0,
      checkpoint: 1,
      documents: [inventory(ids[0]!, 0, 1)],
      state: [],
    });
    const batch: ProjectionCommit = {
      expectedCheckpoint: 1,
      checkpoint: 2,
      documents: ids.map((id) => inventory(id, 5, 2)),
      state: [{ kind: 'k', id: 'x', value: { n: 1 }, ref: 'r' }],
    };
    await expect(dying.commit(batch)).rejects.toThrow(/died/);

    // A reader finds the batch pending and finishes it before it reads: all of it, never a part.
    const read = await reader();
    const all = await read.list('container_inventory', { limit: 1000 });
    expect(all).toHaveLength(ids.length);
    expect(all.every((r) => r.payload.current_eggs === 5)).toBe(true);
    expect(await read.projectionPosition()).toBe(2);
    // A second application (the next open) changes nothing; the old batch cannot replace newer writes.
    const next = await open();
    expect(await next.checkpoint()).toBe(2);
    await next.commit({
      expectedCheckpoint: 2,
      checkpoint: 3,
      documents: [inventory(ids[0]!, 9, 2)],
      state: [],
    });
    const loaded = await next.load({
      documents: [{ entity: 'container_inventory', id: ids[0]! }],
      state: [{ kind: 'k', id: 'x' }],
      stateByRef: [{ kind: 'k', ref: 'r' }],
    });
    expect(loaded.documents.get(projectionKey('container_inventory', ids[0]!))?.payload.current_eggs).toBe(9);
    expect(loaded.stateByRef.get(projectionKey('k', 'r'))).toHaveLength(1);
  });

  it('a reader never sees half a batch: one found in progress is finished before the read', async () => {
    dbName = freshDbName();
    const ids = Array.from({ length: 450 }, () => randomUUID()); // three chunks
    let stallAt: number | undefined;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let stalled: () => void = () => undefined;
    const isStalled = new Promise<void>((resolve) => {
      stalled = resolve;
    });
    const store = await open({
      hooks: {
        async afterChunkApplied(checkpoint, chunk) {
          if (checkpoint === stallAt && chunk === 0) {
            stalled();
            await released;
          }
        },
      },
    });
    await store.commit({
      expectedCheckpoint: 0,
      checkpoint: 1,
      documents: ids.map((id) => inventory(id, 1, 1)),
      state: [],
    });
    stallAt = 2;
    const committing = store.commit({
      expectedCheckpoint: 1,
      checkpoint: 2,
      documents: ids.map((id) => inventory(id, 2, 2)),
      state: [],
    });
    await isStalled; // the first chunk of batch 2 is in, the others not
    const read = await reader();
    const rows = await read.list('container_inventory', { limit: 1000 });
    expect(rows).toHaveLength(ids.length);
    expect(new Set(rows.map((r) => r.payload.current_eggs))).toEqual(new Set([2]));
    expect(await read.projectionPosition()).toBe(2);
    release();
    await committing;
    expect(await store.checkpoint()).toBe(2);
    expect(
      new Set((await read.list('container_inventory', { limit: 1000 })).map((r) => r.payload.current_eggs)),
    ).toEqual(new Set([2]));
  });

  it('a batch whose projector died after its commit document, before naming it pending, is finished by the next projector store', async () => {
    dbName = freshDbName();
    const ids = [randomUUID(), randomUUID()];
    const dying = await open({
      hooks: {
        async afterCommitDocument(checkpoint) {
          if (checkpoint === 2) throw new Error('projector died after the commit point');
        },
      },
    });
    await dying.commit({
      expectedCheckpoint: 0,
      checkpoint: 1,
      documents: [inventory(ids[0]!, 1, 1)],
      state: [],
    });
    await expect(
      dying.commit({
        expectedCheckpoint: 1,
        checkpoint: 2,
        documents: ids.map((id) => inventory(id, 7, 2)),
        state: [],
      }),
    ).rejects.toThrow(/died/);
    // Committed, not yet visible: readers see the checkpoint before it, whole.
    const read = await reader();
    expect(await read.projectionPosition()).toBe(1);
    expect(
      (await read.list('container_inventory', { limit: 10 })).map((r) => r.payload.current_eggs),
    ).toEqual([1]);
    // A second commit from checkpoint 1 loses to the committed batch, which is finished first.
    const next = await open();
    const late = await next
      .commit({ expectedCheckpoint: 1, checkpoint: 2, documents: [inventory(ids[0]!, 9, 2)], state: [] })
      .catch((e: unknown) => e);
    expect(isStoreError(late, storeErrorCodes.CONFLICT)).toBe(true);
    expect(await next.checkpoint()).toBe(2);
    const all = await read.list('container_inventory', { limit: 10 });
    expect(all.map((r) => r.payload.current_eggs)).toEqual([7, 7]);
  });
});
