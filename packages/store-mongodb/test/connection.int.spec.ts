import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import {
  Connecting,
  ConnectingPrimaryStore,
  ConnectingProjectionStore,
  openMongoPrimaryStore,
  openMongoProjectionStore,
} from '@eggmesh/store-mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { dropDatabase, freshDbName, mongodbServer, mongodbUri } from './helpers.js';

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe(`MongoDB store connection on ${mongodbServer()}`, () => {
  const dbNames: string[] = [];
  afterEach(async () => {
    for (const name of dbNames.splice(0)) await dropDatabase(mongodbUri(), name);
  });
  const dbName = () => {
    const name = freshDbName();
    dbNames.push(name);
    return name;
  };

  it('takes the write concern and read preference it is given (the server ignores secondaries)', async () => {
    const store = await openMongoPrimaryStore({
      uri: mongodbUri(),
      dbName: dbName(),
      writeConcern: 1,
      readPreference: 'secondaryPreferred',
    });
    expect(store.client.readPreference.mode).toBe('secondaryPreferred');
    expect(store.client.writeConcern?.w).toBe(1);
    const id = randomUUID();
    await store.commit([
      { op: 'create', entity: 'farm', id, payload: { name: 'x', farm_type: 'local_farm', zone: 'n' } },
    ]);
    expect((await store.get('farm', id))?.payload.name).toBe('x');
    await store.close();
    const defaults = await openMongoPrimaryStore({ uri: mongodbUri(), dbName: dbName() });
    expect(defaults.client.writeConcern?.w).toBe('majority');
    expect(defaults.client.readPreference.mode).toBe('primary');
    await defaults.close();
  });

  it('a read-only store for the read side reads with secondaryPreferred and refuses commits', async () => {
    const name = dbName();
    const writer = await openMongoPrimaryStore({ uri: mongodbUri(), dbName: name });
    const id = randomUUID();
    await writer.commit([
      { op: 'create', entity: 'farm', id, payload: { name: 'x', farm_type: 'local_farm', zone: 'n' } },
    ]);
    const reader = await openMongoPrimaryStore({
      uri: mongodbUri(),
      dbName: name,
      readonly: true,
      readPreference: 'secondaryPreferred',
    });
    expect((await reader.get('farm', id))?.payload.name).toBe('x');
    expect((await reader.log.read(0, 10)).map((e) => e.id)).toEqual([id]);
    const refused = await reader.commit([{ op: 'delete', entity: 'farm', id }]).catch((e: unknown) => e);
    expect(isStoreError(refused, storeErrorCodes.READ_ONLY)).toBe(true);
    expect(await writer.get('farm', id)).not.toBeNull();
    await reader.close();
    await writer.close();
  });

  it('ping answers while connected and fails after close; an unreachable server fails with STORE_UNAVAILABLE', async () => {
    const store = await openMongoPrimaryStore({ uri: mongodbUri(), dbName: dbName() });
    await store.ping();
    await store.close();
    await expect(store.ping()).rejects.toThrow();
    const port = await closedPort();
    const failure = await openMongoPrimaryStore({
      uri: `mongodb://127.0.0.1:${port}`,
      dbName: 'never',
      serverSelectionTimeoutMS: 300,
    }).catch((e: unknown) => e);
    expect(isStoreError(failure, storeErrorCodes.UNAVAILABLE)).toBe(true);
  });

  it('refuses projection entities and unknown filter fields with store codes', async () => {
    const store = await openMongoPrimaryStore({ uri: mongodbUri(), dbName: dbName() });
    const unknown = await store.findBy('farm', 'name', 'x', { limit: 1 }).catch((e: unknown) => e);
    expect(isStoreError(unknown, storeErrorCodes.UNKNOWN_FIELD)).toBe(true);
    const projection = await store.get('farm_output', randomUUID()).catch((e: unknown) => e);
    expect(isStoreError(projection, storeErrorCodes.NOT_FOUND)).toBe(true);
    await store.close();
  });

  it("the projector's background store waits for a slow first open instead of failing 'still connecting'", async () => {
    const name = dbName();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const opening = new Connecting(async () => {
      await held; // a reachable server that takes its time (a fresh database creating its indexes)
      return openMongoProjectionStore({ uri: mongodbUri(), dbName: name });
    });
    const projections = new ConnectingProjectionStore(opening);
    const primary = new ConnectingPrimaryStore(
      new Connecting(async () => {
        await held;
        return openMongoPrimaryStore({ uri: mongodbUri(), dbName: name });
      }),
    );
    try {
      // A request-path store answers at once while connecting; the projector's waits for the outcome.
      const early = await primary.ping().catch((e: unknown) => e);
      expect(isStoreError(early, storeErrorCodes.UNAVAILABLE)).toBe(true);
      const checkpoint = projections.checkpoint();
      release();
      expect(await checkpoint).toBe(0);
    } finally {
      await projections.close();
      await primary.close();
    }
  });

  it("after a failed first open the projector's background store fails at once, naming the failure", async () => {
    const failing = new ConnectingProjectionStore(
      new Connecting(
        async () => {
          throw new Error('no server at all');
        },
        { retryMs: 60_000 },
      ),
    );
    try {
      const error = await failing.checkpoint().catch((e: unknown) => e);
      expect(isStoreError(error, storeErrorCodes.UNAVAILABLE)).toBe(true);
      expect(String(error)).toMatch(/no server at all/);
    } finally {
      await failing.close();
    }
  });
});
