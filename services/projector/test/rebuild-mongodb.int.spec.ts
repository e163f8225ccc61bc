import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openMongoPrimaryStore, openMongoProjectionStore, projectionEntities } from '@eggmesh/store-mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sharedMongodbUri } from '../../../infra/test/shared-servers.js';
import { Projector } from '../src/index.js';
import { DIST, ensureBuilt, Rng, TestClock, WriteGenerator } from './helpers.js';

const run = promisify(execFile);
const mongodbUri = await sharedMongodbUri();
const uri = () => mongodbUri;
/** A read-only store of the test database, for its client. */
let reader: MongoPrimaryStore;
const dbName = `t_rebuild_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

/**
 * Every projection row the read side can see, in a stable order: the current documents and every
 * version of each projection, and the projector's state rows. `position` (the checkpoint of the batch
 * that wrote a row) depends on how the log was cut into batches, so it is left out; so are the
 * server-made `_id`s of versions.
 */
async function dump(): Promise<Record<string, Record<string, unknown>[]>> {
  const db = reader.client.db(dbName);
  const out: Record<string, Record<string, unknown>[]> = {};
  const rows = async (name: string, sort: Record<string, 1>, dropId: boolean) =>
    (await db.collection(name).find({}).sort(sort).toArray()).map(({ _id, position: _p, ...rest }) =>
      dropId ? rest : { _id, ...rest },
    );
  for (const entity of projectionEntities) {
    out[`${entity}_current`] = await rows(`${entity}_current`, { _id: 1 }, false);
    out[`${entity}_versions`] = await rows(`${entity}_versions`, { id: 1, created_at: 1 }, true);
  }
  out.projector_state = await rows('projector_state', { _id: 1 }, false);
  return out;
}

describe(`rebuild-projections on MongoDB (${inject('mongodbServer')})`, () => {
  beforeAll(async () => {
    await ensureBuilt();
    reader = await openMongoPrimaryStore({ uri: uri(), dbName, readonly: true });
  });
  afterAll(async () => {
    await reader.client.db(dbName).dropDatabase();
    await reader.close();
  });

  it('replays the log from position 0 in place and equals the live projections row for row', async () => {
    const clock = new TestClock(Date.parse('2026-03-10T12:00:00Z'));
    const primary = await openMongoPrimaryStore({ uri: uri(), dbName, clock: clock.read });
    const store = await openMongoProjectionStore({ uri: uri(), dbName });
    // The live projections: applied in small batches as the writes come.
    const live = new Projector(primary.log, store, 7);
    const generator = new WriteGenerator(new Rng(8), clock);
    for (let i = 0; i < 150; i++) {
      await primary.commit(generator.commit());
      if (i % 10 === 0) await live.catchUp();
    }
    const head = await live.catchUp();
    expect(head).toBe(await primary.log.head());
    await store.close();
    await primary.close();
    const before = await dump();
    expect(Object.values(before).reduce((n, rows) => n + rows.length, 0)).toBeGreaterThan(50);

    const { stdout, stderr } = await run(process.execPath, [join(DIST, 'rebuild.js'), '--batch', '50'], {
      env: {
        ...process.env,
        EGGMESH_STORE: 'mongodb',
        EGGMESH_MONGODB_URI: uri(),
        EGGMESH_MONGODB_DB: dbName,
      },
      timeout: 120_000,
    });
    expect(stderr).toMatch(new RegExp(`rebuild \\[#+\\] 100% ${head}/${head} events`));
    expect(stdout).toMatch(new RegExp(`rebuilt ${head} events in .* in place on MongoDB \\(${dbName}\\)`));
    expect(await dump()).toEqual(before);
    const meta = await reader.client.db(dbName).collection('projector_meta').findOne({});
    expect(meta).toMatchObject({ value: head, pending: null });
  }, 180_000);
});
