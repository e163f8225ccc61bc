import { randomUUID } from 'node:crypto';
import { parseConfig } from '@eggmesh/service-kit';
import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import {
  Connecting,
  ConnectingReadStore,
  type MongoPrimaryStore,
  type MongoProjectionStore,
  type MongoReadStore,
  openMongoPrimaryStore,
  openMongoProjectionStore,
  openMongoReadStore,
} from '@eggmesh/store-mongodb';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedFerretdbUri, sharedMongodbUri } from '../../../infra/test/shared-servers.js';
import { buildApp } from '../src/index.js';
import { gql, uuid } from './helpers.js';

/**
 * Read-your-writes when the read side reads a copy behind the primary. No server here replicates, so
 * the "secondary" is a second real database that has received the log only up to an earlier
 * position, and the "primary" is the database that has it all: the read-api's decision (wait on the
 * secondary's view, then serve from the primary when the secondary is still behind) runs unchanged
 * over both, on both MongoDB-wire servers. Which copy answered shows in the data: the late farm has
 * another name in each database.
 */
const FARM = uuid(1, 1);
const LATE = uuid(1, 2);
const query = `{ farms { id name } }`;
const WAIT_MS = 400;

interface Side {
  readonly dbName: string;
  readonly primary: MongoPrimaryStore;
  readonly projections: MongoProjectionStore;
}

async function side(uri: string): Promise<Side> {
  const dbName = `t_behind_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  return {
    dbName,
    primary: await openMongoPrimaryStore({ uri, dbName }),
    projections: await openMongoProjectionStore({ uri, dbName }),
  };
}

/** Commits one farm and moves the projections' checkpoint to its position, as the projector would. */
async function writeFarm(s: Side, id: string, name: string): Promise<number> {
  const { position } = await s.primary.commit([
    { op: 'create', entity: 'farm', id, payload: { name, farm_type: 'megafarm', zone: 'west' } },
  ]);
  const expectedCheckpoint = await s.projections.checkpoint();
  await s.projections.commit({ expectedCheckpoint, checkpoint: position, documents: [], state: [] });
  return position;
}

const servers = [
  { name: 'mongo-java-server', uri: () => sharedMongodbUri(), sessions: false },
  { name: 'FerretDB', uri: () => sharedFerretdbUri(), sessions: true },
];

describe.each(servers)('x-min-position over a secondary behind the primary ($name)', (server) => {
  let uri: string;
  let ahead: Side;
  let behind: Side;
  let secondaryReads: MongoReadStore;
  let primaryReads: MongoReadStore;
  let app: FastifyInstance;
  let position: number;

  beforeAll(async () => {
    uri = await server.uri();
    ahead = await side(uri);
    behind = await side(uri);
    // Both copies have the first commit; only the primary has the second.
    await writeFarm(ahead, FARM, 'Both');
    await writeFarm(behind, FARM, 'Both');
    position = await writeFarm(ahead, LATE, 'From the primary');
    secondaryReads = await openMongoReadStore({ uri, dbName: behind.dbName });
    primaryReads = await openMongoReadStore({ uri, dbName: ahead.dbName, readPreference: 'primary' });
    app = await appWaiting(WAIT_MS);
  });

  /** The read-api over the two copies, with a wait bound of `waitMs`. */
  async function appWaiting(waitMs: number): Promise<FastifyInstance> {
    const config = parseConfig({
      EGGMESH_STORE: 'mongodb',
      EGGMESH_MONGODB_URI: uri,
      EGGMESH_LOG_LEVEL: 'silent',
      EGGMESH_MIN_POSITION_WAIT_MS: String(waitMs),
    });
    const built = buildApp({ config, store: secondaryReads, primary: primaryReads });
    await built.ready();
    return built;
  }

  afterAll(async () => {
    await app?.close();
    await secondaryReads?.close();
    await primaryReads?.close();
    for (const s of [ahead, behind]) {
      await s.primary.client.db(s.dbName).dropDatabase();
      await s.primary.close();
      await s.projections.close();
    }
  });

  it(`a view holds ${server.sessions ? 'one session' : 'nothing: the single server is its own view'}`, async () => {
    const view = secondaryReads.view();
    try {
      expect(view !== secondaryReads).toBe(server.sessions);
      expect(await view.replicaPosition()).toBe(position - 1);
      expect(await view.projectionPosition()).toBe(position - 1);
      expect((await view.list('farm', { limit: 10 })).map((r) => r.payload.name)).toEqual(['Both']);
    } finally {
      await view.end();
    }
  });

  it("the background-connecting store's view: itself until open (reads fail UNAVAILABLE), then the open store's", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const connecting = new ConnectingReadStore(
      new Connecting(async () => {
        await held;
        return openMongoReadStore({ uri, dbName: behind.dbName });
      }),
    );
    try {
      const early = connecting.view();
      expect(early).toBe(connecting);
      const error = await early.replicaPosition().catch((e: unknown) => e);
      expect(isStoreError(error, storeErrorCodes.UNAVAILABLE)).toBe(true);
      release();
      await connecting.connecting.ready;
      const view = connecting.view();
      try {
        expect(view !== connecting).toBe(true);
        expect(await view.replicaPosition()).toBe(position - 1);
      } finally {
        await view.end();
      }
    } finally {
      await connecting.close();
    }
  });

  it('serves from the primary when the secondary has not applied the position when the wait runs out', async () => {
    const r = await gql(app, '/graphql', query, { headers: { 'x-min-position': String(position) } });
    expect(r.status).toBe(200);
    expect(r.headers['x-eggmesh-stale']).toBeUndefined();
    expect(r.body.extensions.consistency).toEqual({
      requested: position,
      replica: position,
      projections: position,
      stale: false,
      served: 'primary',
    });
    expect(r.body.data.farms).toEqual([
      { id: FARM, name: 'Both' },
      { id: LATE, name: 'From the primary' },
    ]);
  });

  it('serves a position the secondary already has from the secondary', async () => {
    const r = await gql(app, '/graphql', query, { headers: { 'x-min-position': String(position - 1) } });
    expect(r.body.extensions.consistency).toMatchObject({ stale: false, served: 'replica' });
    expect(r.body.data.farms).toEqual([{ id: FARM, name: 'Both' }]);
  });

  it('says stale, from the secondary, when neither copy has the position', async () => {
    const r = await gql(app, '/graphql', query, { headers: { 'x-min-position': String(position + 5) } });
    expect(r.headers['x-eggmesh-stale']).toBe('true');
    expect(r.body.extensions.consistency).toEqual({
      requested: position + 5,
      replica: position - 1,
      projections: position - 1,
      stale: true,
      served: 'replica',
    });
    expect(r.body.data.farms).toEqual([{ id: FARM, name: 'Both' }]);
  });

  it('serves from the secondary once it applies the position during the wait', async () => {
    // The copy receives the commit while the request waits (its own name shows who answered); the
    // bound is far longer than the test, so only the copy's arrival ends the wait.
    const patient = await appWaiting(600_000);
    const arrives = new Promise<number>((resolve) =>
      setTimeout(() => resolve(writeFarm(behind, LATE, 'From the secondary')), 100),
    );
    const r = await gql(patient, '/graphql', query, { headers: { 'x-min-position': String(position) } });
    await patient.close();
    expect(await arrives).toBe(position);
    expect(r.body.extensions.consistency).toEqual({
      requested: position,
      replica: position,
      projections: position,
      stale: false,
      served: 'replica',
    });
    expect(r.body.data.farms).toEqual([
      { id: FARM, name: 'Both' },
      { id: LATE, name: 'From the secondary' },
    ]);
  });
});
