import { randomUUID } from 'node:crypto';
import { isStoreError, type PrimaryStore, storeErrorCodes, type WriteOperation } from '@eggmesh/store';
import {
  type MongoEventLog,
  type MongoPrimaryStoreOptions,
  openMongoEventLog,
  openMongoPrimaryStore,
} from '@eggmesh/store-mongodb';
import { MongoClient } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { contractServers, dropDatabase, freshDbName } from './helpers.js';

const farm = (name = 'Sunny Acres') => ({ name, farm_type: 'local_farm', zone: 'north' });
const create = (id = randomUUID(), name?: string): WriteOperation => ({
  op: 'create',
  entity: 'farm',
  id,
  payload: farm(name),
});
const update = (id: string, name: string): WriteOperation => ({
  op: 'update',
  entity: 'farm',
  id,
  payload: farm(name),
});

/** A promise and its resolver, to hold a writer at a hook until the test lets it go. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

// The commit protocol on every MongoDB-wire server the run offers (helpers.ts). Races between two
// writer instances run where the server keeps them apart (the emulator); FerretDB takes a writer
// lease instead (its unique index over an array is not per element), and there the second writer is
// refused.
describe.each(await contractServers())('MongoDB log-first protocol on $name', ({ uri, kind }) => {
  const mongodbUri = () => uri;
  const stores: PrimaryStore[] = [];
  const logs: MongoEventLog[] = [];
  const dbNames: string[] = [];
  let dbName = '';

  const open = async (options: Partial<MongoPrimaryStoreOptions> = {}) => {
    if (!dbName) {
      dbName = freshDbName();
      dbNames.push(dbName);
    }
    const store = await openMongoPrimaryStore({ uri: mongodbUri(), dbName, ...options });
    stores.push(store);
    return store;
  };
  /** A log reader of the same database (the projector's and relay's kind: it closes expired gaps). */
  const reader = async (gapTimeoutMs: number) => {
    const log = await openMongoEventLog({ uri: mongodbUri(), dbName, gapTimeoutMs });
    logs.push(log);
    return log;
  };
  /** A writer's process ends: the next writer opens as after a restart. */
  const stop = async (store: PrimaryStore) => {
    stores.splice(stores.indexOf(store), 1);
    await store.close();
  };

  afterEach(async () => {
    for (const log of logs.splice(0)) await log.close();
    for (const store of stores.splice(0)) await store.close();
    for (const name of dbNames.splice(0)) await dropDatabase(mongodbUri(), name);
    dbName = '';
  });

  it('a commit whose server call never settles answers STORE_UNAVAILABLE by its deadline and does not hold the commits behind it', async () => {
    // The hook stands for a driver call that never settles (a write on a socket the dying server
    // closed waits for a `drain` that never comes): the first commit stalls there for ever.
    const stall = gate();
    let stalls = 1;
    const writer = await open({
      commitDeadlineMs: 1000,
      gapTimeoutMs: 0,
      hooks: {
        async afterAllocate() {
          if (stalls-- > 0) await new Promise<never>(() => undefined);
        },
      },
    });
    const stuck = writer.commit([create(randomUUID(), 'stuck')]).catch((e: unknown) => e);
    const queued = writer.commit([create(randomUUID(), 'queued')]).catch((e: unknown) => e);
    const stuckError = await stuck;
    expect(isStoreError(stuckError, storeErrorCodes.UNAVAILABLE)).toBe(true);
    // Queued behind the stuck one: it runs once the queue moved on, or fails by its own deadline.
    const second = await queued;
    const after = await writer.commit([create(randomUUID(), 'after')]);
    stall.open();
    const names = (await writer.log.read(0, 100)).map((e) => e.payload?.name);
    expect(names).toContain('after');
    expect(names).not.toContain('stuck');
    if (!isStoreError(second, storeErrorCodes.UNAVAILABLE)) expect(names).toContain('queued');
    expect(after.records[0]?.payload).toMatchObject({ name: 'after' });
  });

  it('stops readers at a position allocated but never written, until the filler closes it', async () => {
    let crash = false;
    const writer = await open({
      hooks: {
        async afterAllocate() {
          if (crash) throw new Error('writer crashed after allocating');
        },
      },
    });
    const patient = await reader(3_600_000);
    const filler = await reader(0);

    const first = create();
    expect((await writer.commit([first])).position).toBe(1);
    crash = true;
    const lost = create();
    await expect(writer.commit([lost])).rejects.toThrow(/crashed/);
    crash = false;
    const later = create();
    expect((await writer.commit([later])).position).toBe(3);

    // Position 2 may still commit: no reader passes it.
    expect((await patient.read(0, 10)).map((e) => e.id)).toEqual([first.id]);
    expect(await patient.read(1, 10)).toEqual([]);
    expect(await patient.read(1, 10)).toEqual([]);
    // A read-only store never closes a gap, however old.
    const readOnly = await open({ readonly: true, gapTimeoutMs: 0 });
    expect((await readOnly.log.read(0, 10)).map((e) => e.id)).toEqual([first.id]);
    expect((await readOnly.log.read(0, 10)).map((e) => e.id)).toEqual([first.id]);

    // Past the bound a reader closes it with an aborted record; every reader moves on.
    expect((await filler.read(0, 10)).map((e) => [e.position, e.id])).toEqual([
      [1, first.id],
      [3, later.id],
    ]);
    expect((await patient.read(1, 10)).map((e) => e.position)).toEqual([3]);
    expect(await patient.head()).toBe(3);
    expect(await writer.get('farm', lost.id)).toBeNull();
  });

  if (kind === 'ferretdb') {
    it('refuses a second writer while the first holds the lease, and takes the lease once the first closes', async () => {
      const first = await open();
      const id = randomUUID();
      await first.commit([create(id, 'first')]);
      const refused = await open().catch((e: unknown) => e);
      expect(isStoreError(refused, storeErrorCodes.UNAVAILABLE)).toBe(true);
      expect(String(refused)).toMatch(/another writer \(lease 1, .*\) holds this database/);
      // A read-only store (the read side) takes no lease.
      const readOnly = await open({ readonly: true });
      expect((await readOnly.get('farm', id))?.payload.name).toBe('first');
      await stop(first);
      const second = await open();
      expect((await second.commit([update(id, 'second')])).position).toBe(2);
    });

    it('a writer that died without letting go is replaced once its lease expires; one whose lease was taken refuses to commit', async () => {
      const first = await open({ leaseTtlMs: 1500 });
      await first.commit([create()]);
      // What a second writer does once the first stalled past its expiry: it takes the next generation.
      const client = new MongoClient(uri);
      try {
        await client
          .db(dbName)
          .collection<{ _id: number; holder: string; renewed: number }>('writer_lease')
          .insertOne({ _id: 2, holder: 'another write-api', renewed: Date.now() });
        const refused = await first.commit([create()]).catch((e: unknown) => e);
        expect(isStoreError(refused, storeErrorCodes.UNAVAILABLE)).toBe(true);
        expect(String(refused)).toMatch(/lease 2/);
        expect(await first.log.head()).toBe(1);
        await stop(first);
        // That holder dies (never renews): after the expiry a restarted writer takes over.
        const early = await open({ leaseTtlMs: 1500 }).catch((e: unknown) => e);
        expect(isStoreError(early, storeErrorCodes.UNAVAILABLE)).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 1700));
        const next = await open({ leaseTtlMs: 1500 });
        expect((await next.commit([create()])).position).toBe(2);
      } finally {
        await client.close();
      }
    });
  }

  if (kind !== 'ferretdb')
    it('a writer slower than the gap bound loses its position, is not applied there, and commits after', async () => {
      const held = gate();
      const release = gate();
      let calls = 0;
      const slow = await open({
        hooks: {
          async afterAllocate(first) {
            calls++;
            if (calls === 1) {
              held.open();
              await release.opened;
              expect(first).toBe(1);
            }
          },
        },
      });
      const fast = await open();
      const filler = await open({ gapTimeoutMs: 0 });

      const slowOp = create(undefined, 'slow');
      const slowCommit = slow.commit([slowOp]);
      await held.opened;
      const fastOp = create(undefined, 'fast');
      expect((await fast.commit([fastOp])).position).toBe(2);
      expect((await filler.log.read(0, 10)).map((e) => e.id)).toEqual([fastOp.id]);
      release.open();

      const result = await slowCommit;
      expect(result.position).toBe(3);
      expect(calls).toBe(2);
      const entries = await filler.log.read(0, 10);
      expect(entries.map((e) => [e.position, e.id])).toEqual([
        [2, fastOp.id],
        [3, slowOp.id],
      ]);
      expect((await fast.get('farm', slowOp.id))?.payload.name).toBe('slow');
    });

  it('re-applies at open the versions of a commit whose writer stopped after its log record', async () => {
    const crashing = await open({
      hooks: {
        async afterLogInsert() {
          throw new Error('writer crashed after the log record');
        },
      },
    });
    const op = create(undefined, 'recovered');
    await expect(crashing.commit([op])).rejects.toThrow(/crashed/);
    // Committed (the log holds it) but its versions are missing.
    expect((await crashing.log.read(0, 10)).map((e) => e.id)).toEqual([op.id]);
    expect(await crashing.get('farm', op.id)).toBeNull();

    await stop(crashing);
    const reopened = await open();
    expect((await reopened.get('farm', op.id))?.payload.name).toBe('recovered');
    expect((await reopened.findBy('farm', 'zone', 'north', { limit: 10 })).map((r) => r.id)).toEqual([op.id]);
    const [entry] = await reopened.log.read(0, 10);
    expect((await reopened.get('farm', op.id, { at: entry!.createdAt }))?.id).toBe(op.id);
    // A second recovery changes nothing.
    await stop(reopened);
    const again = await open();
    expect(await again.list('farm', { limit: 10 })).toHaveLength(1);
  });

  it('a writer that meets an unapplied commit on the same id applies it first and then refuses', async () => {
    let crash = true;
    // Its commit stops after the log record; its recovery at open had nothing to do, so the next
    // commit meets the unapplied record.
    const writer = await open({
      hooks: {
        async afterLogInsert() {
          if (crash) throw new Error('writer crashed after the log record');
        },
      },
    });
    const id = randomUUID();
    await expect(writer.commit([create(id, 'first')])).rejects.toThrow(/crashed/);
    crash = false;
    expect(await writer.get('farm', id)).toBeNull();
    const failure = await writer.commit([create(id, 'second')]).catch((e: unknown) => e);
    expect(isStoreError(failure, storeErrorCodes.ALREADY_EXISTS)).toBe(true);
    expect((await writer.get('farm', id))?.payload.name).toBe('first');
  });

  it('a refusal caused by an unapplied commit is re-checked after applying it', async () => {
    let crash = true;
    const writer = await open({
      hooks: {
        async afterLogInsert() {
          if (crash) throw new Error('writer crashed after the log record');
        },
      },
    });
    const id = randomUUID();
    await expect(writer.commit([create(id, 'first')])).rejects.toThrow(/crashed/);
    crash = false;
    const result = await writer.commit([update(id, 'second')]);
    expect(result.position).toBe(2);
    const entries = await writer.log.read(0, 10);
    expect(entries[1]).toMatchObject({ op: 'update', previous: farm('first'), payload: farm('second') });
    expect((await writer.get('farm', id))?.payload.name).toBe('second');
  });

  it('one commit may create, update and delete one id: each entry sees the one before', async () => {
    const store = await open({ clock: () => 5_000 });
    const id = randomUUID();
    const result = await store.commit([
      create(id, 'v1'),
      update(id, 'v2'),
      { op: 'delete', entity: 'farm', id },
      create(id, 'v3'),
    ]);
    expect(result.records.map((r) => r.createdAt)).toEqual([5_000, 5_001, 5_002, 5_003]);
    const entries = await store.log.read(0, 10);
    expect(entries.map((e) => [e.op, e.previous?.name ?? null, e.payload?.name ?? null])).toEqual([
      ['create', null, 'v1'],
      ['update', 'v1', 'v2'],
      ['delete', 'v2', null],
      ['create', null, 'v3'],
    ]);
    expect((await store.get('farm', id))?.payload.name).toBe('v3');
    expect(await store.get('farm', id, { at: 5_002 })).toBeNull();
    expect((await store.get('farm', id, { at: 5_001 }))?.payload.name).toBe('v2');
  });

  if (kind !== 'ferretdb')
    it('two writers creating one id at once: exactly one wins', async () => {
      const a = await open();
      const b = await open();
      for (let round = 0; round < 5; round++) {
        const id = randomUUID();
        const outcomes = await Promise.allSettled([a.commit([create(id, 'a')]), b.commit([create(id, 'b')])]);
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        const lost = outcomes.filter((o) => o.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(isStoreError(lost[0]?.reason, storeErrorCodes.ALREADY_EXISTS)).toBe(true);
      }
      const entries = await a.log.read(0, 100);
      expect(entries).toHaveLength(5);
      // Every position a loser took is closed at once: a reader that never fills gaps itself reaches the
      // last allocated position (the loser told "our positions are free, the keys index refused us" from
      // "the gap filler took our position" by reading what is there, whatever the error's text said).
      const patient = await reader(3_600_000);
      const client = new MongoClient(uri);
      try {
        const counter = await client
          .db(dbName)
          .collection<{ _id: string; seq: number }>('counters')
          .findOne({ _id: 'log' });
        expect(counter?.seq).toBeGreaterThanOrEqual(5);
        expect(await patient.head()).toBe(counter?.seq);
      } finally {
        await client.close();
      }
    });

  if (kind !== 'ferretdb')
    it('interleaved updates of one id from two writers: every one lands, versions strictly ordered', async () => {
      const a = await open();
      const b = await open();
      const id = randomUUID();
      await a.commit([create(id, 'v0')]);
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => [
          a.commit([update(id, `a${i}`)]),
          b.commit([update(id, `b${i}`)]),
        ]).flat(),
      );
      const entries = (await a.log.read(0, 100)).filter((e) => e.id === id);
      expect(entries).toHaveLength(21);
      for (let i = 1; i < entries.length; i++) {
        expect(entries[i]!.createdAt).toBeGreaterThan(entries[i - 1]!.createdAt);
        // Each entry replaced exactly the payload of the one before it.
        expect(entries[i]!.previous).toEqual(entries[i - 1]!.payload);
      }
      expect((await b.get('farm', id))?.payload).toEqual(entries[20]!.payload);
    });

  it('a multi-operation commit is all or nothing when its writer stops before the log record', async () => {
    let crash = true;
    const writer = await open({
      hooks: {
        async afterAllocate() {
          if (crash) throw new Error('writer crashed after allocating');
        },
      },
    });
    const ops = [create(), create(), create()];
    await expect(writer.commit(ops)).rejects.toThrow(/crashed/);
    crash = false;
    expect(
      await writer.getMany(
        'farm',
        ops.map((o) => o.id),
      ),
    ).toEqual([]);
    await writer.commit([create()]);
    const entries = await (await reader(0)).read(0, 10);
    expect(entries.map((e) => e.position)).toEqual([4]);
  });
});
