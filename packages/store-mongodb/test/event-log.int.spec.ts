import { randomUUID } from 'node:crypto';
import type { WriteOperation } from '@eggmesh/store';
import { type MongoPrimaryStore, openMongoPrimaryStore } from '@eggmesh/store-mongodb';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, serverName, start } from '../../../infra/mongodb/server.mjs';
import { dropDatabase, freshDbName, mongodbServer, mongodbUri } from './helpers.js';

const create = (name = 'Sunny Acres'): WriteOperation => ({
  op: 'create',
  entity: 'farm',
  id: randomUUID(),
  payload: { name, farm_type: 'local_farm', zone: 'north' },
});

describe(`MongoDB event log on ${mongodbServer()} (no oplog: bounded poll)`, () => {
  const stores: MongoPrimaryStore[] = [];
  let dbName = '';
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await dropDatabase(mongodbUri(), dbName);
  });
  const open = async (
    options: Parameters<typeof openMongoPrimaryStore>[0] extends infer O ? Partial<O> : never,
  ) => {
    const store = await openMongoPrimaryStore({ uri: mongodbUri(), dbName, ...options });
    stores.push(store);
    return store;
  };

  it('keeps the head below a position reserved but not yet written, and reads never pass it', async () => {
    dbName = freshDbName();
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let stall = false;
    let holding: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const slow = await open({
      hooks: {
        async afterAllocate() {
          if (!stall) return;
          holding();
          await released;
        },
      },
    });
    const fast = await open();
    const reader = await open({ gapTimeoutMs: 3_600_000 });

    await slow.commit([create('one')]);
    stall = true;
    const pending = slow.commit([create('two')]);
    // Wait until the slow writer holds position 2, then commit 3 beside it.
    await held;
    const third = await fast.commit([create('three')]);
    expect(third.position).toBe(3);

    expect(await reader.log.head()).toBe(1);
    expect((await reader.log.read(0, 10)).map((e) => e.payload?.name)).toEqual(['one']);
    // A wait for something past 1 times out while position 2 is open.
    expect(await reader.log.waitBeyond(1, 100)).toBe(false);

    const waiting = reader.log.waitBeyond(1, 10_000);
    release();
    expect((await pending).position).toBe(2);
    expect(await waiting).toBe(true);
    expect(await reader.log.head()).toBe(3);
    expect((await reader.log.read(0, 10)).map((e) => e.payload?.name)).toEqual(['one', 'two', 'three']);
    expect(await reader.log.wakeKind()).toBe('poll');
  });

  it('reads from inside a multi-entry commit, by any reader, past a gap of many positions', async () => {
    dbName = freshDbName();
    const writer = await open({});
    await writer.commit([create('a')]);
    const five = await writer.commit([create('b1'), create('b2'), create('b3'), create('b4'), create('b5')]);
    await writer.commit([create('c')]);
    expect(five.position).toBe(6);
    // A reader that never saw the log resumes inside the five-entry commit (positions 2 … 6).
    const fresh = await open({ readonly: true });
    expect((await fresh.log.read(3, 2)).map((e) => [e.position, e.payload?.name])).toEqual([
      [4, 'b3'],
      [5, 'b4'],
    ]);
    // … and again from where that read stopped (inside the same commit), then to the end.
    expect((await fresh.log.read(5, 10)).map((e) => e.payload?.name)).toEqual(['b5', 'c']);
    expect(await fresh.log.head()).toBe(7);
    // More than one window of positions (1000 per query) still reads in order.
    const many = Array.from({ length: 1200 }, (_, i) => ({
      position: 8 + i,
      entity: 'farm' as const,
      id: randomUUID(),
      op: 'create' as const,
      payload: { name: `m${i}`, farm_type: 'local_farm', zone: 'north' },
      previous: null,
      createdAt: Date.now() + i,
    }));
    await writer.importLog(many);
    expect(await fresh.log.head()).toBe(1207);
    const all = await fresh.log.read(0, 2000);
    expect(all.map((e) => e.position)).toEqual(Array.from({ length: 1207 }, (_, i) => i + 1));
  });

  it('waitBeyond: true at once when the head is past, false on timeout or abort, true when a commit lands', async () => {
    dbName = freshDbName();
    const store = await open();
    expect(await store.log.head()).toBe(0);
    expect(await store.log.waitBeyond(0, 50)).toBe(false);
    const controller = new AbortController();
    const aborted = store.log.waitBeyond(0, 60_000, controller.signal);
    controller.abort();
    expect(await aborted).toBe(false);

    const waiting = store.log.waitBeyond(0, 10_000);
    await store.commit([create()]);
    expect(await waiting).toBe(true);
    expect(await store.log.waitBeyond(0, 0)).toBe(true);
    await store.log.acknowledge(1);
    expect(await store.log.read(0, 10)).toHaveLength(1);
  });
});

describe(`MongoDB event log on ${serverName} with its oplog on (change stream)`, () => {
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('wakes a waiter through a change stream on event_log', async () => {
    server = await start({ oplog: true });
    const writer = await openMongoPrimaryStore({ uri: server.uri, dbName: 'cs' });
    const reader = await openMongoPrimaryStore({ uri: server.uri, dbName: 'cs' });
    try {
      expect(await reader.log.wakeKind()).toBe('change-stream');
      const waiting = reader.log.waitBeyond(0, 10_000);
      const result = await writer.commit([create()]);
      expect(await waiting).toBe(true);
      expect(await reader.log.head()).toBe(result.position);
    } finally {
      await reader.close();
      await writer.close();
    }
  });
});
