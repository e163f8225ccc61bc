import { setTimeout as sleep } from 'node:timers/promises';
import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import { type MongoProjectionStore, openMongoProjectionStore } from '@eggmesh/store-mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { contractServers, dropDatabase, freshDbName } from './helpers.js';

const batch = (from: number, to: number) => ({
  expectedCheckpoint: from,
  checkpoint: to,
  documents: [],
  state: [],
});

for (const { name, uri, kind } of await contractServers()) {
  describe(`two projectors on one projections database, on ${name}`, () => {
    const open: MongoProjectionStore[] = [];
    const dbs: string[] = [];
    afterEach(async () => {
      for (const store of open.splice(0)) await store.close().catch(() => undefined);
      for (const db of dbs.splice(0)) await dropDatabase(uri, db);
    });
    const fresh = () => {
      const db = freshDbName();
      dbs.push(db);
      return db;
    };
    const projector = async (dbName: string, leaseTtlMs?: number) => {
      const store = await openMongoProjectionStore({ uri, dbName, ...(leaseTtlMs ? { leaseTtlMs } : {}) });
      open.push(store);
      return store;
    };

    if (kind === 'ferretdb') {
      it('refuses the second while the first holds the lease, and lets it in once the first closes', async () => {
        const dbName = fresh();
        const first = await projector(dbName);
        const refused = await projector(dbName).catch((e: unknown) => e);
        expect(isStoreError(refused, storeErrorCodes.UNAVAILABLE)).toBe(true);
        expect(String(refused)).toMatch(/another projector .* holds this database/);
        await first.commit(batch(0, 3));
        await first.close();
        const second = await projector(dbName);
        await second.commit(batch(3, 5));
        expect(await second.checkpoint()).toBe(5);
      });

      it('lets the second in once a first that died without letting go stops renewing', async () => {
        const dbName = fresh();
        const first = await projector(dbName, 3000);
        await first.commit(batch(0, 2));
        // A crash: the connection goes, the lease is never released, so it only expires.
        await first.client.close();
        const early = await projector(dbName, 3000).catch((e: unknown) => e);
        expect(isStoreError(early, storeErrorCodes.UNAVAILABLE)).toBe(true);
        await sleep(3200);
        const second = await projector(dbName, 3000);
        await second.commit(batch(2, 4));
        expect(await second.checkpoint()).toBe(4);
      });

      it('a holder whose lease another took (it had stalled past its expiry) refuses to commit', async () => {
        const dbName = fresh();
        const first = await projector(dbName);
        await first.commit(batch(0, 1));
        // What a second projector writes when it takes a lapsed lease: the next generation, its own.
        const leases = first.collections.batches.db.collection<{
          _id: number;
          holder: string;
          renewed: number;
        }>('projector_lease');
        await leases.insertOne({ _id: 2, holder: 'the second projector', renewed: Date.now() });
        const refused = await first.commit(batch(1, 2)).catch((e: unknown) => e);
        expect(isStoreError(refused, storeErrorCodes.UNAVAILABLE)).toBe(true);
        expect(String(refused)).toMatch(/lease 2/);
        expect(await first.checkpoint()).toBe(1);
      });
    } else {
      it('opens both: the unique commit document keeps them apart (no lease on this server)', async () => {
        const dbName = fresh();
        const first = await projector(dbName);
        const second = await projector(dbName);
        const results = await Promise.allSettled([first.commit(batch(0, 3)), second.commit(batch(0, 4))]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect([3, 4]).toContain(await second.checkpoint());
        const names = (await first.collections.batches.db.listCollections().toArray()).map((c) => c.name);
        expect(names).toContain('projector_commits');
        expect(names).not.toContain('projector_lease');
      });
    }
  });
}
