import { randomUUID } from 'node:crypto';
import { openBackend } from '@eggmesh/backends';
import { materialize, projectionNames } from '@eggmesh/projections';
import { parseConfig } from '@eggmesh/service-kit';
import type { LogEntry } from '@eggmesh/store';
import { openMongoPrimaryStore } from '@eggmesh/store-mongodb';
import { describe, expect, it } from 'vitest';
import { sharedFerretdbUri, sharedMongodbUri } from '../../../infra/test/shared-servers.js';
import { Projector } from '../src/index.js';
import { modelProjections, type ProjectionSnapshot, Rng, TestClock, WriteGenerator } from './helpers.js';

const fresh = (what: string) => `t_${what}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

/** The collection names of a database. */
async function collections(uri: string, dbName: string): Promise<Set<string>> {
  const store = await openMongoPrimaryStore({ uri, dbName, readonly: true });
  try {
    const names = await store.client.db(dbName).listCollections({}, { nameOnly: true }).toArray();
    return new Set(names.map((c) => c.name));
  } finally {
    await store.close();
  }
}

/** Waits for a store that connects in the background (the services' stores) to answer. */
async function connected(store: { ping(): Promise<void> }): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await store.ping();
    } catch (error) {
      if (attempt >= 300) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function drop(uri: string, dbName: string): Promise<void> {
  const store = await openMongoPrimaryStore({ uri, dbName, readonly: true });
  try {
    await store.client.db(dbName).dropDatabase();
  } finally {
    await store.close();
  }
}

/**
 * EGGMESH_MONGODB_PROJECTIONS_URI end to end through the backend the services use: the write-api's
 * commits and the log in one database, the projector's projections, checkpoint and commit marker in
 * another (a second database of the same server, or a second server), and the read-api's and the
 * write-api's readers serving them. The projections equal the naive model of the log, document for
 * document.
 */
describe.each([
  { name: 'another database of mongo-java-server', projectionsServer: () => sharedMongodbUri() },
  {
    name: 'another server (FerretDB) than the write store (mongo-java-server)',
    projectionsServer: () => sharedFerretdbUri(),
  },
])('projections in $name', ({ projectionsServer }) => {
  it('the projector commits there; the readers read them there; the write store holds none', async () => {
    const uri = await sharedMongodbUri();
    const projectionsUri = await projectionsServer();
    const dbName = fresh('writes');
    const projectionsDb = fresh('projections');
    // The database goes in the path, before any options (FerretDB's uri names its replica set).
    const [server, options] = projectionsUri.replace(/\/$/, '').split('/?');
    const withDb = `${server}/${projectionsDb}${options ? `?${options}` : ''}`;
    const config = parseConfig({
      EGGMESH_STORE: 'mongodb',
      EGGMESH_MONGODB_URI: uri,
      EGGMESH_MONGODB_DB: dbName,
      EGGMESH_MONGODB_PROJECTIONS_URI: withDb,
      EGGMESH_LOG_LEVEL: 'silent',
    });
    expect(config.mongodb.projections).toEqual({ uri: withDb, dbName: projectionsDb });
    const backend = await openBackend(config, 'test', () => undefined);
    const write = await backend.openWriteSide();
    const source = await backend.openPrimaryLog();
    const projections = await backend.openProjections();
    const read = await backend.openReadSide();
    try {
      for (const store of [write.primary, write.reader, read.store, read.primary ?? read.store])
        await connected(store);
      const clock = new TestClock(Date.now());
      const generator = new WriteGenerator(new Rng(42), clock);
      const projector = new Projector(source.log, projections.current(), 5);
      for (let i = 0; i < 60; i++) {
        await write.primary.commit(generator.commit());
        clock.advance(60_000);
        if (i % 7 === 0) await projector.catchUp();
      }
      const head = await source.log.head();
      expect(await projector.catchUp()).toBe(head);
      expect(await projections.current().checkpoint()).toBe(head);

      const entries: LogEntry[] = await source.log.read(0, 1_000_000);
      expect(entries.at(-1)?.position).toBe(head);
      const ref = Math.max(...entries.map((e) => e.createdAt));
      const expected = modelProjections(entries, ref);
      expect(expected.size).toBeGreaterThanOrEqual(5);

      // The read-api (secondaries, and its primary reader) and the write-api's REST reader read them.
      for (const reader of [read.store, read.primary ?? read.store, write.reader]) {
        const seen: ProjectionSnapshot = new Map();
        for (const entity of projectionNames) {
          for (const record of await reader.list(entity, { limit: 1_000_000 })) {
            seen.set(`${entity}/${record.id}`, materialize(entity, record.payload, ref));
          }
        }
        expect(seen).toEqual(expected);
      }
      expect(await read.store.projectionPosition()).toBe(head);
      expect(await read.store.replicaPosition()).toBe(head);

      const writes = await collections(uri, dbName);
      const apart = await collections(projectionsUri, projectionsDb);
      expect(writes.has('event_log')).toBe(true);
      expect([...writes].filter((name) => name.startsWith('projector_') || name.endsWith('_output'))).toEqual(
        [],
      );
      for (const name of ['projector_meta', 'projector_commits', 'farm_output_current'])
        expect(apart.has(name)).toBe(true);
      expect(apart.has('event_log')).toBe(false);
    } finally {
      await read.close();
      await projections.close();
      await source.close();
      await write.close();
      await drop(uri, dbName);
      await drop(projectionsUri, projectionsDb);
    }
  }, 180_000);
});
