import { emptyFarm } from '@eggmesh/projections';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fixture, fixture, gql, uuid } from './helpers.js';

const FARM = uuid(1, 1);
let f: Fixture;
afterEach(async () => f.close());

const query = `{ farm(id: "${FARM}") { name farmOutput { farm_type } } }`;

/** The wait a `server-timing: position;dur=<ms>` header reports, in ms. */
function positionWait(header: unknown): number {
  const match = /^position;dur=(\d+\.\d)$/.exec(String(header));
  expect(match, `server-timing ${String(header)}`).not.toBeNull();
  return Number(match![1]);
}

async function writeFarm(): Promise<number> {
  const position = await f.write([
    {
      op: 'create',
      entity: 'farm',
      id: FARM,
      payload: { name: 'Fresh', farm_type: 'megafarm', zone: 'west' },
    },
  ]);
  return position;
}

describe('x-min-position', () => {
  it('waits for the projections to reach the position (read-your-writes)', async () => {
    f = await fixture();
    await f.project([], 0);
    // Once without waiting: the first request also builds and compiles what later ones reuse.
    await gql(f.app, '/graphql', query);
    const position = await writeFarm();
    // The projector lands the farm's output document ~100 ms after the write.
    const projected = new Promise<number>((resolve) =>
      setTimeout(async () => {
        await f.project(
          [{ entity: 'farm_output', id: FARM, payload: { ...emptyFarm(FARM), farm_type: 'megafarm' } }],
          position,
        );
        resolve(performance.now());
      }, 100),
    );
    const started = performance.now();
    const r = await gql(f.app, '/graphql', query, { headers: { 'x-min-position': String(position) } });
    const answered = performance.now();
    expect(answered).toBeGreaterThanOrEqual(await projected);
    expect(answered - started).toBeGreaterThanOrEqual(90);
    expect(r.status).toBe(200);
    expect(r.headers['x-eggmesh-stale']).toBeUndefined();
    // It reports a wait (the part of the projector's ~100 ms left once the request reached it; how much
    // of it the request spent parsing first depends on the machine's load), within the request's own time.
    const waited = positionWait(r.headers['server-timing']);
    expect(waited).toBeGreaterThan(0);
    expect(waited).toBeLessThanOrEqual(answered - started + 0.1);
    expect(r.body.data).toEqual({ farm: { name: 'Fresh', farmOutput: [{ farm_type: 'megafarm' }] } });
    expect(r.body.extensions.consistency).toEqual({
      requested: position,
      replica: position,
      projections: position,
      stale: false,
      served: 'replica',
    });
  });

  it('answers at once when the position is already reached, on per-entity endpoints and over GET', async () => {
    // A bound longer than the test's timeout: a request that waited for it would fail the test.
    f = await fixture({ env: { EGGMESH_MIN_POSITION_WAIT_MS: '600000' } });
    const position = await writeFarm();
    await f.project([], position);
    const started = performance.now();
    const r = await gql(f.app, '/farm/graph', `{ getById(id: "${FARM}") { name } }`, {
      headers: { 'x-min-position': String(position) },
    });
    const took = performance.now() - started;
    expect(positionWait(r.headers['server-timing'])).toBeLessThanOrEqual(took + 0.1);
    expect(r.body.data.getById).toEqual({ name: 'Fresh' });
    // Without the header nothing waited, and nothing says so.
    const plain = await gql(f.app, '/farm/graph', `{ getById(id: "${FARM}") { name } }`);
    expect(plain.headers['server-timing']).toBeUndefined();
    expect(r.body.extensions.consistency.stale).toBe(false);
    const get = await f.app.inject({
      method: 'GET',
      url: '/farm/graph',
      query: { query: '{ getAll { name } }' },
      headers: { 'x-min-position': '1' },
    });
    expect(get.json().extensions.consistency).toMatchObject({ requested: 1, stale: false });
  });

  it('answers with what it has once the bound passes, and says it is stale', async () => {
    f = await fixture({ env: { EGGMESH_MIN_POSITION_WAIT_MS: '60' } });
    const position = await writeFarm();
    const started = performance.now();
    const r = await gql(f.app, '/graphql', query, { headers: { 'x-min-position': String(position + 10) } });
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(55);
    expect(r.status).toBe(200);
    expect(r.headers['x-eggmesh-stale']).toBe('true');
    expect(positionWait(r.headers['server-timing'])).toBeGreaterThanOrEqual(55);
    expect(r.body.data).toEqual({ farm: { name: 'Fresh', farmOutput: [] } });
    expect(r.body.extensions.consistency).toEqual({
      requested: position + 10,
      replica: position,
      projections: 0,
      stale: true,
      served: 'replica',
    });
  });

  it.each(['abc', '-1', '1.5', '', '99999999999999999999'])(
    'refuses the malformed value %j with a coded error',
    async (value) => {
      f = await fixture();
      const r = await gql(f.app, '/graphql', '{ farms { id } }', { headers: { 'x-min-position': value } });
      expect(r.status).toBe(400);
      expect(r.body.data).toBeNull();
      expect(r.body.errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_BAD_MIN_POSITION');
    },
  );
});
