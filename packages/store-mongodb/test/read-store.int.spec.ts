import { randomUUID } from 'node:crypto';
import type { WriteOperation } from '@eggmesh/store';
import { openMongoPrimaryStore, openMongoProjectionStore, openMongoReadStore } from '@eggmesh/store-mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { dropDatabase, freshDbName, mongodbServer, mongodbUri } from './helpers.js';

const create = (name: string): WriteOperation => ({
  op: 'create',
  entity: 'farm',
  id: randomUUID(),
  payload: { name, farm_type: 'local_farm', zone: 'north' },
});

describe(`MongoDB read store on ${mongodbServer()}`, () => {
  const closers: { close(): Promise<void> }[] = [];
  let dbName = '';
  afterEach(async () => {
    for (const c of closers.splice(0)) await c.close();
    await dropDatabase(mongodbUri(), dbName);
  });
  const track = <T extends { close(): Promise<void> }>(x: T): T => {
    closers.push(x);
    return x;
  };

  it('replicaPosition is the applied position: a commit in the log whose versions are not in yet holds it back', async () => {
    dbName = freshDbName();
    let crash = false;
    const writer = track(
      await openMongoPrimaryStore({
        uri: mongodbUri(),
        dbName,
        hooks: {
          async afterLogInsert() {
            if (crash) throw new Error('writer died after its log record');
          },
        },
      }),
    );
    const read = track(await openMongoReadStore({ uri: mongodbUri(), dbName, wake: 'poll' }));
    expect(await read.replicaPosition()).toBe(0);
    const first = await writer.commit([create('one')]);
    expect(await read.replicaPosition()).toBe(first.position);
    expect(await read.get('farm', first.records[0]!.id)).toEqual(first.records[0]);

    crash = true;
    const lost = create('two');
    await expect(writer.commit([lost])).rejects.toThrow(/died/);
    // In the log (committed), not yet in the entity collections: the log head is past it, the replica is not.
    expect(await writer.log.head()).toBe(2);
    expect(await read.get('farm', lost.id)).toBeNull();
    expect(await read.replicaPosition()).toBe(1);

    // Recovery applies it; the applied position follows, and `changed` wakes.
    const changed = read.changed(10_000);
    crash = false;
    const recovered = track(await openMongoPrimaryStore({ uri: mongodbUri(), dbName }));
    expect(recovered).toBeDefined();
    await changed;
    expect(await read.replicaPosition()).toBe(2);
    expect(await read.get('farm', lost.id)).toMatchObject({ id: lost.id });
  });

  it('projectionPosition follows the projector checkpoint; changed resolves on a move and on timeout', async () => {
    dbName = freshDbName();
    const projections = track(await openMongoProjectionStore({ uri: mongodbUri(), dbName }));
    const read = track(await openMongoReadStore({ uri: mongodbUri(), dbName, wake: 'poll' }));
    expect(await read.projectionPosition()).toBe(0);
    expect(await read.replicaPosition()).toBe(0);
    // Nothing moves: it resolves on its timeout, and positions stay.
    await read.changed(50);
    expect(await read.projectionPosition()).toBe(0);
    const changed = read.changed(10_000);
    await projections.commit({ expectedCheckpoint: 0, checkpoint: 4, documents: [], state: [] });
    await changed;
    expect(await read.projectionPosition()).toBe(4);
    const controller = new AbortController();
    const aborted = read.changed(60_000, controller.signal);
    controller.abort();
    await aborted;
    await read.ping();
  });
});
