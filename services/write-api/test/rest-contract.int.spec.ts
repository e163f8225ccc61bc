// The REST contract of domain.md §4, route by route, for all 13 entities, on a real SQLite file.

import { emptyFarm, emptyHen, emptyInventory } from '@eggmesh/projections';
import { type EntityName, entities, entityNames, jsonSchemaOf } from '@eggmesh/schema';
import { openProjectionStore } from '@eggmesh/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clientEntities,
  create,
  expectError,
  FAKE_CLOCK_START,
  newId,
  type Payload,
  projectionNames,
  Samples,
  send,
  startApp,
  type TestApp,
  UUID_V4,
  UUID_V7,
  uuidTime,
} from './helpers.js';

/** A query parameter of the OpenAPI document, as much of it as the tests read. */
interface ListParameter {
  name: string;
  in: string;
  schema?: { items?: { enum?: string[] } };
  content?: Record<
    string,
    { schema?: { properties?: Record<string, unknown>; additionalProperties?: unknown } }
  >;
}

const position = (res: { headers: Record<string, unknown> }) => {
  const raw = res.headers['x-log-position'];
  expect(raw, 'x-log-position header').toMatch(/^\d+$/);
  return Number(raw);
};

/** Fields a payload may leave out (a full replace drops them when the new body has none). */
const optionalFields = (name: EntityName) => {
  const schema = jsonSchemaOf(name, 'input');
  const required = new Set(schema.required ?? []);
  return Object.keys(schema.properties ?? {}).filter((f) => f !== 'id' && !required.has(f));
};
const requiredFields = (name: EntityName) =>
  (jsonSchemaOf(name, 'input').required ?? []).filter((f) => f !== 'id');

describe.each(clientEntities)('%s REST routes', (name) => {
  let t: TestApp;
  let samples: Samples;
  const base = `/${name}/api`;

  beforeAll(async () => {
    t = await startApp();
    samples = new Samples(t.app);
  });
  afterAll(async () => t.close());

  /** Every row of the list, by id. */
  const listed = async () => {
    const res = await send(t.app, 'GET', base);
    expect(res.statusCode).toBe(200);
    return new Map((res.json() as Payload[]).map((r) => [r.id as string, r]));
  };

  it('POST creates: 201, body = payload + server-assigned UUID v7, x-log-position = log head', async () => {
    const payload = await samples.payload(name);
    const before = await t.head();
    const res = await send(t.app, 'POST', base, payload);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as Payload;
    expect(body.id).toMatch(UUID_V7);
    // Its time is the server's clock (the test's fake one, which moves 1 ms per call), not the machine's.
    expect(uuidTime(body.id as string)).toBeGreaterThanOrEqual(FAKE_CLOCK_START);
    expect(uuidTime(body.id as string)).toBeLessThan(FAKE_CLOCK_START + 1_000_000);
    expect(body).toEqual({ ...payload, id: body.id });
    expect(position(res)).toBe(before + 1);
    expect(await t.head()).toBe(before + 1);

    const stored = await t.primary.get(name, body.id as string);
    expect(stored?.payload).toEqual(payload);

    const get = await send(t.app, 'GET', `${base}/${body.id}`);
    expect(get.statusCode).toBe(200);
    expect(get.json()).toEqual(body);
  });

  it('POST honours a client id and answers 409 when the id already exists (nothing written)', async () => {
    const id = newId();
    const payload = { ...(await samples.payload(name)), id };
    const res = await send(t.app, 'POST', base, payload);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual(payload);

    const before = await t.head();
    const again = await send(t.app, 'POST', base, { ...(await samples.payload(name)), id });
    const err = expectError(again, 409, 'EGGMESH_ALREADY_EXISTS');
    expect(err.error).toContain(id);
    expect(await t.head()).toBe(before);
    expect((await send(t.app, 'GET', `${base}/${id}`)).json()).toEqual(payload);
  });

  it('GET lists the newest live version of every row, each with its id', async () => {
    const a = await create(t.app, name, await samples.payload(name));
    const b = await create(t.app, name, await samples.payload(name));
    const replacement = await samples.payload(name);
    expect((await send(t.app, 'PUT', `${base}/${a.id}`, replacement)).statusCode).toBe(200);
    const rows = await listed();
    expect(rows.get(a.id as string)).toEqual({ ...replacement, id: a.id });
    expect(rows.get(b.id as string)).toEqual(b);
    for (const row of rows.values()) expect(row.id).toEqual(expect.any(String));
  });

  it('GET /:id answers 404 with EGGMESH_NOT_FOUND for an unknown id', async () => {
    const id = newId();
    const err = expectError(await send(t.app, 'GET', `${base}/${id}`), 404, 'EGGMESH_NOT_FOUND');
    expect(err.error).toContain(id);
  });

  it('PUT replaces the whole payload (validated), answers 200 with payload + id', async () => {
    const first = { ...(await samples.payload(name)) };
    const created = await create(t.app, name, first);
    const id = created.id as string;
    // A full replace: optional fields left out of the new body are gone afterwards.
    const next = await samples.payload(name);
    for (const f of optionalFields(name)) delete next[f];
    const before = await t.head();
    const res = await send(t.app, 'PUT', `${base}/${id}`, next);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ...next, id });
    expect(position(res)).toBe(before + 1);
    const get = (await send(t.app, 'GET', `${base}/${id}`)).json() as Payload;
    expect(get).toEqual({ ...next, id });
    for (const f of optionalFields(name)) expect(get).not.toHaveProperty(f);

    // The body may repeat the path id.
    const same = await send(t.app, 'PUT', `${base}/${id}`, { ...first, id });
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json()).toEqual({ ...first, id });
    expect(position(same)).toBe(before + 2);

    // An invalid replacement is refused and changes nothing.
    const missing = requiredFields(name)[0]!;
    const invalid = { ...first };
    delete invalid[missing];
    const bad = expectError(await send(t.app, 'PUT', `${base}/${id}`, invalid), 400, 'EGGMESH_VALIDATION');
    expect(bad.issues?.map((i) => i.path)).toContainEqual([missing]);
    expect(await t.head()).toBe(before + 2);
    expect((await send(t.app, 'GET', `${base}/${id}`)).json()).toEqual({ ...first, id });
  });

  it('PUT answers 404 for an id that never existed', async () => {
    const before = await t.head();
    const id = newId();
    expectError(
      await send(t.app, 'PUT', `${base}/${id}`, await samples.payload(name)),
      404,
      'EGGMESH_NOT_FOUND',
    );
    expect(await t.head()).toBe(before);
    expectError(await send(t.app, 'GET', `${base}/${id}`), 404, 'EGGMESH_NOT_FOUND');
  });

  it('PUT answers 400 EGGMESH_ID_MISMATCH when the body id differs from the path id', async () => {
    const created = await create(t.app, name, await samples.payload(name));
    const before = await t.head();
    const other = newId();
    const res = await send(t.app, 'PUT', `${base}/${created.id}`, {
      ...(await samples.payload(name)),
      id: other,
    });
    expectError(res, 400, 'EGGMESH_ID_MISMATCH');
    expect(await t.head()).toBe(before);
    expect((await send(t.app, 'GET', `${base}/${created.id}`)).json()).toEqual(created);
    expectError(await send(t.app, 'GET', `${base}/${other}`), 404, 'EGGMESH_NOT_FOUND');
  });

  it('DELETE answers 200 {id, status: deleted}; afterwards GET, PUT and DELETE are 404', async () => {
    const created = await create(t.app, name, await samples.payload(name));
    const id = created.id as string;
    const before = await t.head();
    const res = await send(t.app, 'DELETE', `${base}/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ id, status: 'deleted' });
    expect(position(res)).toBe(before + 1);

    expectError(await send(t.app, 'GET', `${base}/${id}`), 404, 'EGGMESH_NOT_FOUND');
    expectError(
      await send(t.app, 'PUT', `${base}/${id}`, await samples.payload(name)),
      404,
      'EGGMESH_NOT_FOUND',
    );
    expectError(await send(t.app, 'DELETE', `${base}/${id}`), 404, 'EGGMESH_NOT_FOUND');
    expect(await t.head()).toBe(before + 1);
    expect((await listed()).has(id)).toBe(false);
    expect((await send(t.app, 'GET', `${base}/bulk?ids=${id}`)).json()).toEqual([]);
    // Deleting an id that never existed is a 404 too.
    expectError(await send(t.app, 'DELETE', `${base}/${newId()}`), 404, 'EGGMESH_NOT_FOUND');
    expect(await t.head()).toBe(before + 1);
  });

  it('POST /bulk creates every item (201, array in order, one log position per item)', async () => {
    const clientId = newId();
    const items = [
      await samples.payload(name),
      { ...(await samples.payload(name)), id: clientId },
      await samples.payload(name),
    ];
    const before = await t.head();
    const res = await send(t.app, 'POST', `${base}/bulk`, items);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as Payload[];
    expect(body).toHaveLength(3);
    body.forEach((row, i) => {
      expect(row).toEqual({ ...items[i], id: row.id });
    });
    expect(body[0]!.id).toMatch(UUID_V7);
    expect(body[1]!.id).toBe(clientId);
    expect(body[2]!.id).toMatch(UUID_V7);
    // Made later, so it sorts later: ids in the order of their making.
    expect(String(body[0]!.id) < String(body[2]!.id)).toBe(true);
    expect(new Set(body.map((r) => r.id)).size).toBe(3);
    expect(position(res)).toBe(before + 3);
    expect(await t.head()).toBe(before + 3);
    const rows = await listed();
    for (const row of body) expect(rows.get(row.id as string)).toEqual(row);
  });

  it('POST /bulk is all-or-nothing: an invalid item is a 400 naming its index, and nothing is written', async () => {
    const listBefore = await listed();
    const before = await t.head();
    const missing = requiredFields(name)[0]!;
    const broken = await samples.payload(name);
    delete broken[missing];
    const ids = [newId(), newId()];
    const items = [
      { ...(await samples.payload(name)), id: ids[0] },
      { ...(await samples.payload(name)), id: ids[1] },
      broken,
    ];
    const err = expectError(await send(t.app, 'POST', `${base}/bulk`, items), 400, 'EGGMESH_VALIDATION') as {
      index?: number;
      issues?: { path: unknown[] }[];
    };
    expect(err.index).toBe(2);
    expect(err.issues?.map((i) => i.path)).toContainEqual([2, missing]);

    expect(await t.head()).toBe(before);
    expect(await listed()).toEqual(listBefore);
    for (const id of ids) expectError(await send(t.app, 'GET', `${base}/${id}`), 404, 'EGGMESH_NOT_FOUND');
  });

  it('POST /bulk is all-or-nothing when a later item collides with an existing id (409 naming the index)', async () => {
    const existing = await create(t.app, name, await samples.payload(name));
    const listBefore = await listed();
    const before = await t.head();
    const fresh = newId();
    const items = [
      { ...(await samples.payload(name)), id: fresh },
      { ...(await samples.payload(name)), id: existing.id },
    ];
    const err = expectError(
      await send(t.app, 'POST', `${base}/bulk`, items),
      409,
      'EGGMESH_ALREADY_EXISTS',
    ) as {
      index?: number;
    };
    expect(err.index).toBe(1);
    expect(await t.head()).toBe(before);
    expect(await listed()).toEqual(listBefore);
    expectError(await send(t.app, 'GET', `${base}/${fresh}`), 404, 'EGGMESH_NOT_FOUND');

    // Two items with the same id in one request: the second collides with the first; neither is kept.
    const twin = newId();
    const dup = await send(t.app, 'POST', `${base}/bulk`, [
      { ...(await samples.payload(name)), id: twin },
      { ...(await samples.payload(name)), id: twin },
    ]);
    expect((expectError(dup, 409, 'EGGMESH_ALREADY_EXISTS') as { index?: number }).index).toBe(1);
    expect(await t.head()).toBe(before);
    expectError(await send(t.app, 'GET', `${base}/${twin}`), 404, 'EGGMESH_NOT_FOUND');
  });

  it('GET /bulk?ids= returns the live ones in the order asked; 400 without ids', async () => {
    const a = await create(t.app, name, await samples.payload(name));
    const b = await create(t.app, name, await samples.payload(name));
    const gone = await create(t.app, name, await samples.payload(name));
    expect((await send(t.app, 'DELETE', `${base}/${gone.id}`)).statusCode).toBe(200);
    const res = await send(t.app, 'GET', `${base}/bulk?ids=${b.id},${newId()},${gone.id},${a.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([b, a]);

    expectError(await send(t.app, 'GET', `${base}/bulk`), 400, 'EGGMESH_BAD_QUERY');
    expectError(await send(t.app, 'GET', `${base}/bulk?ids=`), 400, 'EGGMESH_BAD_QUERY');
  });

  it('x-log-position is on every write response and moves by one per change', async () => {
    let expected = await t.head();
    const created = await send(t.app, 'POST', base, await samples.payload(name));
    expect(position(created)).toBe(++expected);
    const id = (created.json() as Payload).id as string;
    const bulk = await send(t.app, 'POST', `${base}/bulk`, [
      await samples.payload(name),
      await samples.payload(name),
    ]);
    expected += 2;
    expect(position(bulk)).toBe(expected);
    const put = await send(t.app, 'PUT', `${base}/${id}`, await samples.payload(name));
    expect(position(put)).toBe(++expected);
    const del = await send(t.app, 'DELETE', `${base}/${id}`);
    expect(position(del)).toBe(++expected);
    expect(await t.head()).toBe(expected);
    // The log holds exactly these changes, in order.
    const log = await t.primary.log.read(expected - 5, 10);
    expect(log.map((e) => e.op)).toEqual(['create', 'create', 'create', 'update', 'delete']);
    expect(log.map((e) => e.position)).toEqual([1, 2, 3, 4, 5].map((i) => expected - 5 + i));
  });

  it('answers no other origin by default', async () => {
    const res = await send(t.app, 'GET', base, undefined, { origin: 'https://dash.example' });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const post = await send(t.app, 'POST', base, await samples.payload(name), {
      origin: 'https://dash.example',
    });
    expect(post.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('projections are read-only', () => {
  let t: TestApp;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startApp();
    const samples = new Samples(t.app);
    ids.container = await samples.target('container');
    ids.hen = await samples.target('hen');
    ids.farm = await samples.target('farm');
    // Seed one document of each projection the way the projector stores them.
    const store = openProjectionStore({ dir: t.files.projectionsDir });
    const at = Date.parse('2026-03-01T12:00:00Z');
    await store.commit({
      expectedCheckpoint: 0,
      checkpoint: await t.head(),
      state: [],
      documents: [
        {
          entity: 'container_inventory',
          id: ids.container,
          createdAt: at,
          live: true,
          payload: { ...emptyInventory(ids.container), capacity: 100, current_eggs: 25, total_deposits: 25 },
        },
        {
          entity: 'hen_productivity',
          id: ids.hen,
          createdAt: at,
          live: true,
          payload: { ...emptyHen(ids.hen), farm_id: ids.farm, total_eggs: 9, good_eggs: 9 },
        },
        {
          entity: 'farm_output',
          id: ids.farm,
          createdAt: at,
          live: true,
          payload: { ...emptyFarm(ids.farm), farm_type: 'local_farm', active_hens: 1, total_hens: 1 },
        },
      ],
    });
    await store.close();
  });
  afterAll(async () => t.close());

  const keyOf = { container_inventory: 'container', hen_productivity: 'hen', farm_output: 'farm' } as const;

  it.each(projectionNames)('%s answers GET list, GET by id, GET bulk and 404', async (name) => {
    const id = ids[keyOf[name as keyof typeof keyOf]]!;
    const base = `/${name}/api`;
    const list = await send(t.app, 'GET', base);
    expect(list.statusCode, list.body).toBe(200);
    const rows = list.json() as Payload[];
    expect(rows).toHaveLength(1);
    const doc = rows[0]!;
    expect(doc.id).toBe(id);
    expect(entities[name].schema.safeParse(doc).success).toBe(true);
    expect(doc[entities[name].projectionKey!]).toBe(id);

    const one = await send(t.app, 'GET', `${base}/${id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(doc);
    expect((await send(t.app, 'GET', `${base}/bulk?ids=${id},${newId()}`)).json()).toEqual([doc]);
    expectError(await send(t.app, 'GET', `${base}/bulk`), 400, 'EGGMESH_BAD_QUERY');
    expectError(await send(t.app, 'GET', `${base}/${newId()}`), 404, 'EGGMESH_NOT_FOUND');
  });

  it('serves the seeded numbers', async () => {
    const inv = (await send(t.app, 'GET', `/container_inventory/api/${ids.container}`)).json() as Payload;
    expect(inv).toMatchObject({ current_eggs: 25, total_deposits: 25, utilization_pct: 0 });
    const hen = (await send(t.app, 'GET', `/hen_productivity/api/${ids.hen}`)).json() as Payload;
    expect(hen).toMatchObject({ farm_id: ids.farm, total_eggs: 9, quality_rate: 1 });
    const farm = (await send(t.app, 'GET', `/farm_output/api/${ids.farm}`)).json() as Payload;
    expect(farm).toMatchObject({ farm_type: 'local_farm', active_hens: 1, total_hens: 1 });
  });

  it.each(projectionNames)(
    '%s refuses POST, PUT and DELETE with 405 EGGMESH_PROJECTION_READ_ONLY',
    async (name) => {
      const id = ids[keyOf[name as keyof typeof keyOf]]!;
      const base = `/${name}/api`;
      const before = await t.head();
      const attempts = [
        send(t.app, 'POST', base, { id: newId() }),
        send(t.app, 'POST', `${base}/bulk`, [{ id: newId() }]),
        send(t.app, 'PUT', `${base}/${id}`, { id }),
        send(t.app, 'DELETE', `${base}/${id}`),
        send(t.app, 'DELETE', `${base}/${newId()}`),
      ];
      for (const res of await Promise.all(attempts)) {
        const err = expectError(res, 405, 'EGGMESH_PROJECTION_READ_ONLY');
        expect(err.error).toMatch(/projector/);
        expect(res.headers.allow).toMatch(/GET/);
        expect(res.headers.allow).not.toMatch(/POST|PUT|DELETE/);
      }
      expect(await t.head()).toBe(before);
      expect((await send(t.app, 'GET', `${base}/${id}`)).statusCode).toBe(200);
    },
  );
});

describe('service endpoints', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => t.close());

  it('GET /health answers 200', async () => {
    const res = await send(t.app, 'GET', '/health');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('GET /ready answers 200 while storage answers', async () => {
    const res = await send(t.app, 'GET', '/ready');
    expect(res.statusCode).toBe(200);
  });

  it('CORS: with *, preflight is answered and error responses carry the header too', async () => {
    const other = await startApp({ EGGMESH_CORS_ORIGIN: '*' });
    try {
      const pre = await other.app.inject({
        method: 'OPTIONS',
        url: '/farm/api',
        headers: {
          origin: 'https://dash.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(pre.statusCode).toBeLessThan(300);
      expect(pre.headers['access-control-allow-origin']).toBe('*');
      expect(String(pre.headers['access-control-allow-methods'])).toMatch(/POST/);
      for (const res of [
        await send(other.app, 'GET', `/farm/api/${newId()}`, undefined, { origin: 'https://x.example' }),
        await send(other.app, 'GET', '/nope/api', undefined, { origin: 'https://x.example' }),
        await send(other.app, 'POST', '/farm/api', { bogus: 1 }, { origin: 'https://x.example' }),
      ]) {
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.headers['access-control-allow-origin']).toBe('*');
      }
    } finally {
      await other.close();
    }
  });

  it('CORS origin is configurable', async () => {
    const other = await startApp({ EGGMESH_CORS_ORIGIN: 'https://dash.example' });
    try {
      const res = await send(other.app, 'GET', '/farm/api', undefined, { origin: 'https://dash.example' });
      expect(res.headers['access-control-allow-origin']).toBe('https://dash.example');
      const foreign = await send(other.app, 'GET', '/farm/api', undefined, {
        origin: 'https://evil.example',
      });
      expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  /**
   * A GET as a client that honours the documented overload answer does it: on 503 EGGMESH_OVERLOADED it
   * waits `retry-after` and asks again. The first build of the API document blocks this test process's
   * loop, and on a loaded machine the service then sheds, as it should, for a window or two.
   */
  const sendOnceNotOverloaded = async (url: string) => {
    for (let attempt = 0; ; attempt++) {
      const res = await send(t.app, 'GET', url);
      if (res.statusCode !== 503 || attempt === 10) return res;
      expect(res.json()).toMatchObject({ code: 'EGGMESH_OVERLOADED' });
      await new Promise((resolve) => setTimeout(resolve, Number(res.headers['retry-after']) * 1000));
    }
  };

  it('GET /openapi.json is OpenAPI 3.1 with the paths of every entity', async () => {
    const res = await sendOnceNotOverloaded('/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json() as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    for (const name of entityNames) {
      const def = entities[name];
      const writable = def.kind !== 'projection';
      const collection = doc.paths[`/${name}/api`];
      const bulk = doc.paths[`/${name}/api/bulk`];
      const item = doc.paths[`/${name}/api/{id}`];
      expect(collection, name).toBeDefined();
      expect(bulk, name).toBeDefined();
      expect(item, name).toBeDefined();
      expect(Object.keys(collection!)).toEqual(writable ? ['get', 'post'] : ['get']);
      expect(Object.keys(bulk!)).toEqual(writable ? ['get', 'post'] : ['get']);
      expect(item).toHaveProperty('get');
      expect('put' in item!).toBe(writable);
      expect('delete' in item!).toBe(writable);
      expect(doc.components.schemas[def.typeName]).toBeDefined();
      // The list's filter and sort name the catalogue's queryable fields, and only those.
      const queryable = ['id', ...Object.keys(def.queryFields)];
      const parameters = (collection!.get as { parameters: ListParameter[] }).parameters;
      const where = parameters.find((p) => p.name === 'where');
      const whereSchema = where?.content?.['application/json']?.schema;
      expect(where?.in, name).toBe('query');
      expect(Object.keys(whereSchema?.properties ?? {}).sort(), name).toEqual(
        [...queryable, 'and', 'or', 'not'].sort(),
      );
      expect(whereSchema?.additionalProperties, name).toBe(false);
      const sort = parameters.find((p) => p.name === 'sort');
      expect(sort?.schema?.items?.enum, name).toEqual(queryable.flatMap((f) => [f, `-${f}`]));
    }
  });

  it('GET /docs/ serves Swagger UI', async () => {
    const res = await sendOnceNotOverloaded('/docs/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toMatch(/swagger/i);
  });

  it('GET /ready answers 503 once storage is closed', async () => {
    await t.primary.close();
    const res = await send(t.app, 'GET', '/ready');
    expectError(res, 503, 'EGGMESH_UNAVAILABLE');
    expect((await send(t.app, 'GET', '/health')).statusCode).toBe(200);
  });
});

describe('EGGMESH_ID_VERSION', () => {
  it('=4 assigns random UUID v4 ids to creates without one', async () => {
    const t = await startApp({ EGGMESH_ID_VERSION: '4' });
    try {
      const samples = new Samples(t.app);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await send(t.app, 'POST', '/farm/api', await samples.payload('farm'));
        expect(res.statusCode, res.body).toBe(201);
        ids.push((res.json() as Payload).id as string);
      }
      for (const id of ids) expect(id).toMatch(UUID_V4);
      expect(new Set(ids).size).toBe(3);
    } finally {
      await t.close();
    }
  });
});
