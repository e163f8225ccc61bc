import { emptyHen } from '@eggmesh/projections';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, type Fixture, fixture, gql, uuid } from './helpers.js';

const FARM = uuid(1, 1);
const COOP = uuid(2, 1);
const HEN = uuid(3, 1);
const HEN2 = uuid(3, 2);
const GONE = uuid(1, 2);

let f: Fixture;
/** Times at which the world looked different. */
const t: Record<string, number> = {};

beforeAll(async () => {
  f = await fixture();
  t.beforeAll = f.now - 1;
  await f.write([
    {
      op: 'create',
      entity: 'farm',
      id: FARM,
      payload: { name: 'v1', farm_type: 'homestead', zone: 'north' },
    },
    {
      op: 'create',
      entity: 'coop',
      id: COOP,
      payload: { name: 'coop v1', farm_id: FARM, capacity: 5, coop_type: 'barn' },
    },
    { op: 'create', entity: 'hen', id: HEN, payload: { name: 'hen v1', coop_id: COOP, breed: 'sussex' } },
    {
      op: 'create',
      entity: 'farm',
      id: GONE,
      payload: { name: 'doomed', farm_type: 'megafarm', zone: 'north' },
    },
  ]);
  const day = Math.floor(f.now / DAY);
  await f.project([
    {
      entity: 'hen_productivity',
      id: HEN,
      payload: { ...emptyHen(HEN), total_eggs: 4, good_eggs: 4, days: { [day]: 4 } },
    },
  ]);
  t.v1 = f.now;
  f.advance(1000);
  await f.write([
    {
      op: 'update',
      entity: 'farm',
      id: FARM,
      payload: { name: 'v2', farm_type: 'homestead', zone: 'south' },
    },
    {
      op: 'update',
      entity: 'coop',
      id: COOP,
      payload: { name: 'coop v2', farm_id: FARM, capacity: 6, coop_type: 'barn' },
    },
    { op: 'create', entity: 'hen', id: HEN2, payload: { name: 'hen two', coop_id: COOP, breed: 'leghorn' } },
  ]);
  t.v2 = f.now;
  f.advance(1000);
  await f.write([
    { op: 'delete', entity: 'farm', id: GONE },
    { op: 'delete', entity: 'hen', id: HEN },
  ]);
  t.v3 = f.now;
  f.advance(1000);
});
afterAll(async () => f.close());

describe('at on entities', () => {
  it('reads the newest version written at or before at', async () => {
    const q = `query ($at: Float) { getById(id: "${FARM}", at: $at) { name zone } }`;
    expect(
      (await gql(f.app, '/farm/graph', q, { variables: { at: t.beforeAll } })).body.data.getById,
    ).toBeNull();
    expect((await gql(f.app, '/farm/graph', q, { variables: { at: t.v1 } })).body.data.getById).toEqual({
      name: 'v1',
      zone: 'north',
    });
    expect((await gql(f.app, '/farm/graph', q, { variables: { at: t.v2 } })).body.data.getById).toEqual({
      name: 'v2',
      zone: 'south',
    });
    expect((await gql(f.app, '/farm/graph', q)).body.data.getById).toEqual({ name: 'v2', zone: 'south' });
  });

  it('filters on the value the field had at that time', async () => {
    const north = (at?: number) =>
      gql(f.app, '/farm/graph', 'query ($at: Float) { getByZone(zone: "north", at: $at) { name } }', {
        variables: { at },
      });
    expect((await north(t.v1)).body.data.getByZone).toEqual([{ name: 'v1' }, { name: 'doomed' }]);
    expect((await north(t.v2)).body.data.getByZone).toEqual([{ name: 'doomed' }]);
    expect((await north()).body.data.getByZone).toEqual([]);
  });
});

describe('deleted entities', () => {
  it('are hidden from getById, getAll and filters', async () => {
    const r = await gql(
      f.app,
      '/graphql',
      `{ farm(id: "${GONE}") { id } farms { id } farmsByZone(zone: "north") { id } hen(id: "${HEN}") { id } }`,
    );
    expect(r.body.data).toEqual({ farm: null, farms: [{ id: FARM }], farmsByZone: [], hen: null });
  });

  it('are visible at a time before the delete', async () => {
    const r = await gql(
      f.app,
      '/graphql',
      `{ farm(id: "${GONE}", at: ${t.v2}) { name } farms(at: ${t.v2}) { id } hen(id: "${HEN}", at: ${t.v2}) { name } }`,
    );
    expect(r.body.data).toEqual({
      farm: { name: 'doomed' },
      farms: [{ id: FARM }, { id: GONE }],
      hen: { name: 'hen v1' },
    });
  });

  it('drop out of relations, except when read at an earlier time', async () => {
    const now = await gql(f.app, '/coop/graph', `{ getById(id: "${COOP}") { hens { name } } }`);
    expect(now.body.data.getById.hens).toEqual([{ name: 'hen two' }]);
    const before = await gql(
      f.app,
      '/coop/graph',
      `{ getById(id: "${COOP}", at: ${t.v2}) { hens { name } } }`,
    );
    expect(before.body.data.getById.hens).toEqual([{ name: 'hen v1' }, { name: 'hen two' }]);
  });
});

describe('at through relations', () => {
  it('reads the whole tree at one point in time', async () => {
    const tree = (at: number) =>
      gql(
        f.app,
        '/farm/graph',
        `{ getById(id: "${FARM}", at: ${at}) { name coops { name farm { name } hens { name coop { name } } } } }`,
      );
    expect((await tree(t.v1)).body.data.getById).toEqual({
      name: 'v1',
      coops: [
        { name: 'coop v1', farm: { name: 'v1' }, hens: [{ name: 'hen v1', coop: { name: 'coop v1' } }] },
      ],
    });
    expect((await tree(t.v2)).body.data.getById).toEqual({
      name: 'v2',
      coops: [
        {
          name: 'coop v2',
          farm: { name: 'v2' },
          hens: [
            { name: 'hen v1', coop: { name: 'coop v2' } },
            { name: 'hen two', coop: { name: 'coop v2' } },
          ],
        },
      ],
    });
  });

  it('mixes two points in time in one request without mixing the trees', async () => {
    const r = await gql(
      f.app,
      '/graphql',
      `{ old: coop(id: "${COOP}", at: ${t.v1}) { farm { name } } new: coop(id: "${COOP}") { farm { name } } }`,
    );
    expect(r.body.data).toEqual({ old: { farm: { name: 'v1' } }, new: { farm: { name: 'v2' } } });
  });

  it('reads projections at the same time and computes their windows at it', async () => {
    const at = (ms: number) =>
      gql(
        f.app,
        '/hen/graph',
        `{ getById(id: "${HEN}", at: ${ms}) { productivity { eggs_today eggs_week total_eggs } } }`,
      );
    expect((await at(t.v1)).body.data.getById.productivity).toEqual([
      { eggs_today: 4, eggs_week: 4, total_eggs: 4 },
    ]);
    // Two days later (the hen alive at t.v2 is the one to ask, so read the projection directly).
    const later = await gql(
      f.app,
      '/hen_productivity/graph',
      `{ getById(id: "${HEN}", at: ${t.v1 + 2 * DAY}) { eggs_today eggs_week total_eggs hen { name } } }`,
    );
    expect(later.body.data.getById).toEqual({ eggs_today: 0, eggs_week: 4, total_eggs: 4, hen: null });
    const beforeProjection = await gql(
      f.app,
      '/hen_productivity/graph',
      `{ getById(id: "${HEN}", at: ${t.beforeAll}) { id } }`,
    );
    expect(beforeProjection.body.data.getById).toBeNull();
  });

  it('computes the windows of a current projection read at the clock of each request', async () => {
    // Nothing is written in between: the stored document and its record stay the same, only the
    // clock moves, first within the day, then past its end.
    const query = `{ getById(id: "${HEN}") { eggs_today eggs_week total_eggs } }`;
    const read = async () => (await gql(f.app, '/hen_productivity/graph', query)).body.data.getById;
    const saved = f.now;
    try {
      f.now = Math.floor(t.v1 / DAY) * DAY + 1;
      expect(await read()).toEqual({ eggs_today: 4, eggs_week: 4, total_eggs: 4 });
      f.now += DAY - 2;
      expect(await read()).toEqual({ eggs_today: 4, eggs_week: 4, total_eggs: 4 });
      f.now += 2;
      expect(await read()).toEqual({ eggs_today: 0, eggs_week: 4, total_eggs: 4 });
      f.now += 7 * DAY;
      expect(await read()).toEqual({ eggs_today: 0, eggs_week: 0, total_eggs: 4 });
    } finally {
      f.now = saved;
    }
  });
});
