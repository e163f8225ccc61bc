// Bad input: each gets a clear 4xx JSON error with a stable code, never a 500, and writes nothing.
import { type EntityName, entities } from '@eggmesh/schema';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  clientEntities,
  expectError,
  newId,
  type Payload,
  Samples,
  send,
  startApp,
  type TestApp,
} from './helpers.js';

type Issue = { path: (string | number)[]; code: string; message: string };
type ErrorBody = { error: string; code: string; issues?: Issue[]; index?: number };

let t: TestApp;
let samples: Samples;
/** Valid payloads (FK targets already created), one per client entity. */
const valid = {} as Record<EntityName, Payload>;
/** An existing row of each client entity, for PUT and DELETE. */
const existing = {} as Record<EntityName, Payload>;
let head = 0;
let rowCounts: Record<string, number> = {};

const countRows = async () => {
  const counts: Record<string, number> = {};
  for (const name of clientEntities)
    counts[name] = ((await send(t.app, 'GET', `/${name}/api`)).json() as unknown[]).length;
  return counts;
};

beforeAll(async () => {
  t = await startApp();
  samples = new Samples(t.app);
  for (const name of clientEntities) {
    valid[name] = await samples.payload(name);
    const res = await send(t.app, 'POST', `/${name}/api`, await samples.payload(name));
    expect(res.statusCode, res.body).toBe(201);
    existing[name] = res.json() as Payload;
  }
});
afterAll(async () => t.close());

beforeEach(async () => {
  head = await t.head();
  rowCounts = await countRows();
});

/** The request was refused with `status`/`code`, and nothing was written. */
async function refused(res: LightMyRequestResponse, status: number, code: string): Promise<ErrorBody> {
  expect(res.statusCode, res.body).toBeLessThan(500);
  const body = expectError(res, status, code) as ErrorBody;
  expect(res.headers['x-log-position']).toBeUndefined();
  expect(await t.head()).toBe(head);
  return body;
}

async function nothingWritten() {
  expect(await t.head()).toBe(head);
  expect(await countRows()).toEqual(rowCounts);
}

/** A 400 EGGMESH_VALIDATION whose issues include one at each of `paths`. */
async function invalid(res: LightMyRequestResponse, ...paths: (string | number)[][]): Promise<ErrorBody> {
  const body = await refused(res, 400, 'EGGMESH_VALIDATION');
  expect(Array.isArray(body.issues)).toBe(true);
  expect(body.issues!.length).toBeGreaterThan(0);
  for (const issue of body.issues!) {
    expect(Array.isArray(issue.path)).toBe(true);
    expect(typeof issue.code).toBe('string');
    expect(issue.message.length).toBeGreaterThan(0);
  }
  const got = body.issues!.map((i) => i.path);
  for (const path of paths) expect(got).toContainEqual(path);
  return body;
}

const post = (name: EntityName, body: unknown) => send(t.app, 'POST', `/${name}/api`, body);
const put = (name: EntityName, body: unknown) =>
  send(t.app, 'PUT', `/${name}/api/${existing[name]!.id}`, body);
const bulk = (name: EntityName, body: unknown) => send(t.app, 'POST', `/${name}/api/bulk`, body);
const raw = (method: 'POST' | 'PUT', url: string, payload: string, contentType?: string) =>
  t.app.inject({ method, url, payload, headers: contentType ? { 'content-type': contentType } : {} });

describe('malformed and empty bodies', () => {
  it.each([
    ['truncated object', '{"name": "Farm", "farm_type":'],
    ['trailing comma', '{"name": "Farm",}'],
    ['single quotes', "{'name': 'Farm'}"],
    ['bare word', 'farm'],
  ])('malformed JSON (%s) is 400 EGGMESH_BAD_JSON on POST, PUT and bulk', async (_label, payload) => {
    await refused(await raw('POST', '/farm/api', payload, 'application/json'), 400, 'EGGMESH_BAD_JSON');
    await refused(
      await raw('PUT', `/farm/api/${existing.farm!.id}`, payload, 'application/json'),
      400,
      'EGGMESH_BAD_JSON',
    );
    await refused(await raw('POST', '/farm/api/bulk', payload, 'application/json'), 400, 'EGGMESH_BAD_JSON');
    await nothingWritten();
  });

  it('an empty body declared as JSON is 400 EGGMESH_BAD_JSON', async () => {
    await refused(await raw('POST', '/farm/api', '', 'application/json'), 400, 'EGGMESH_BAD_JSON');
    await refused(
      await raw('PUT', `/farm/api/${existing.farm!.id}`, '', 'application/json'),
      400,
      'EGGMESH_BAD_JSON',
    );
    await refused(await raw('POST', '/farm/api/bulk', '', 'application/json'), 400, 'EGGMESH_BAD_JSON');
    await nothingWritten();
  });

  it('no body at all is a 400 validation error at the root path', async () => {
    await invalid(await t.app.inject({ method: 'POST', url: '/farm/api' }), []);
    await invalid(await t.app.inject({ method: 'PUT', url: `/farm/api/${existing.farm!.id}` }), []);
    await invalid(await t.app.inject({ method: 'POST', url: '/farm/api/bulk' }), []);
    await nothingWritten();
  });

  it.each([
    ['null', null],
    ['an array', [{ name: 'x' }]],
    ['a string', 'farm'],
    ['a number', 42],
    ['an empty object', {}],
  ])('a body that is %s is a 400 validation error', async (label, body) => {
    const res = await post('farm', JSON.stringify(body));
    if (label === 'an empty object') {
      await invalid(res, ['name'], ['farm_type'], ['zone']);
    } else {
      await invalid(res, []);
    }
    await nothingWritten();
  });
});

describe('field validation', () => {
  it('wrong types are refused with the path of each field', async () => {
    await invalid(await post('farm', { ...valid.farm, name: 5, zone: ['north'] }), ['name'], ['zone']);
    await invalid(await post('coop', { ...valid.coop, capacity: '10' }), ['capacity']);
    await invalid(await post('coop', { ...valid.coop, capacity: 2.5 }), ['capacity']);
    await invalid(await post('consumer', { ...valid.consumer, weekly_demand: -1 }), ['weekly_demand']);
    await invalid(
      await post('lay_report', { ...valid.lay_report, eggs: '3', hen_id: 7 }),
      ['eggs'],
      ['hen_id'],
    );
    await invalid(await post('hen', { ...valid.hen, status: null }), ['status']);
    await invalid(await put('container', { ...valid.container, capacity: true }), ['capacity']);
    await nothingWritten();
  });

  it('missing required fields are listed one by one', async () => {
    for (const name of clientEntities) {
      const schema = entities[name].schema;
      const required = Object.keys(valid[name]!).filter((f) => {
        const without = { ...valid[name] };
        delete without[f];
        return !schema.safeParse(without).success;
      });
      expect(required.length, name).toBeGreaterThan(0);
      const body = Object.fromEntries(Object.entries(valid[name]!).filter(([f]) => !required.includes(f)));
      await invalid(await post(name, body), ...required.map((f) => [f]));
    }
    await nothingWritten();
  });

  it('unknown fields are refused, each named by its path', async () => {
    for (const name of clientEntities) {
      const body = await invalid(
        await post(name, { ...valid[name], colour: 'brown', legs: 2 }),
        ['colour'],
        ['legs'],
      );
      expect(JSON.stringify(body.issues)).toContain('colour');
      await invalid(await put(name, { ...valid[name], colour: 'brown' }), ['colour']);
    }
    await nothingWritten();
  });

  it.each([
    ['farm', 'farm_type', 'ranch'],
    ['hen', 'status', 'sleeping'],
    ['container', 'container_type', 'basket'],
    ['consumer', 'consumer_type', 'school'],
    ['lay_report', 'quality', 'grade_z'],
    ['storage_deposit', 'source_type', 'market'],
    ['storage_withdrawal', 'reason', 'eaten'],
    ['container_transfer', 'transport_method', 'drone'],
    ['consumption_report', 'purpose', 'juggling'],
    ['farm', 'farm_type', 'MEGAFARM'],
  ] as const)('%s.%s outside its list (%s) is refused', async (name, field, value) => {
    const body = await invalid(await post(name, { ...valid[name], [field]: value }), [field]);
    expect(body.issues!.find((i) => i.path[0] === field)?.code).toBe('invalid_value');
    await nothingWritten();
  });

  it('non-UUID ids in the body are refused (own id and every FK)', async () => {
    for (const name of clientEntities) {
      await invalid(await post(name, { ...valid[name], id: 'farm-1' }), ['id']);
      for (const { field } of entities[name].foreignKeys) {
        await invalid(await post(name, { ...valid[name], [field]: 'not-a-uuid' }), [field]);
      }
    }
    await invalid(await post('storage_deposit', { ...valid.storage_deposit, source_id: '1234' }), [
      'source_id',
    ]);
    await invalid(await put('farm', { ...valid.farm, id: 'abc' }), ['id']);
    await nothingWritten();
  });

  it('non-UUID ids in the path are 400 EGGMESH_BAD_ID', async () => {
    for (const id of ['not-a-uuid', '123', `${newId()}x`, 'farm%20one']) {
      await refused(await send(t.app, 'GET', `/farm/api/${id}`), 400, 'EGGMESH_BAD_ID');
      await refused(await send(t.app, 'PUT', `/farm/api/${id}`, valid.farm), 400, 'EGGMESH_BAD_ID');
      await refused(await send(t.app, 'DELETE', `/farm/api/${id}`), 400, 'EGGMESH_BAD_ID');
    }
    await refused(
      await send(t.app, 'GET', `/farm/api/bulk?ids=${existing.farm!.id},nope`),
      400,
      'EGGMESH_BAD_ID',
    );
    await nothingWritten();
  });

  it.each([
    ['a space instead of T', '2026-02-20 06:30:00Z'],
    ['no offset', '2026-02-20T06:30:00'],
    ['a date only', '2026-02-20'],
    ['words', 'yesterday'],
    ['epoch ms as a string', '1771569000000'],
    ['an impossible month', '2026-13-20T06:30:00Z'],
    ['an impossible hour', '2026-02-20T25:30:00Z'],
    ['an empty string', ''],
  ])('a timestamp that is not ISO-8601 (%s) is refused', async (_label, value) => {
    for (const name of [
      'lay_report',
      'storage_deposit',
      'storage_withdrawal',
      'container_transfer',
    ] as const) {
      await invalid(await post(name, { ...valid[name], timestamp: value }), ['timestamp']);
    }
    await invalid(
      await post('consumption_report', { ...valid.consumption_report, timestamp: 1771569000000 }),
      ['timestamp'],
    );
    await nothingWritten();
  });

  it('ISO-8601 timestamps with Z, an offset or fractions are accepted', async () => {
    for (const timestamp of [
      '2026-02-20T06:30:00Z',
      '2026-02-20T06:30:00.123Z',
      '2026-02-20T07:30:00+01:00',
    ]) {
      const res = await post('storage_withdrawal', { ...valid.storage_withdrawal, timestamp });
      expect(res.statusCode, res.body).toBe(201);
      expect((res.json() as Payload).timestamp).toBe(timestamp);
    }
  });

  it.each([
    ['slashes', '2025/04/01'],
    ['day first', '01-04-2025'],
    ['month 13', '2025-13-01'],
    ['day 32', '2025-01-32'],
    ['a date-time', '2025-04-01T00:00:00Z'],
    ['a short year', '25-04-01'],
    ['a number', 20250401],
  ])('a dob that is not YYYY-MM-DD (%s) is refused', async (_label, dob) => {
    await invalid(await post('hen', { ...valid.hen, dob }), ['dob']);
    await invalid(await put('hen', { ...valid.hen, dob }), ['dob']);
    await nothingWritten();
  });

  it('zero or negative eggs are refused where at least 1 is required; lay reports accept 0', async () => {
    for (const name of [
      'storage_deposit',
      'storage_withdrawal',
      'container_transfer',
      'consumption_report',
    ] as const) {
      for (const eggs of [0, -1]) await invalid(await post(name, { ...valid[name], eggs }), ['eggs']);
    }
    await invalid(await post('lay_report', { ...valid.lay_report, eggs: -1 }), ['eggs']);
    await invalid(await post('coop', { ...valid.coop, capacity: 0 }), ['capacity']);
    await invalid(await post('container', { ...valid.container, capacity: -5 }), ['capacity']);
    await nothingWritten();
    const zero = await post('lay_report', { ...valid.lay_report, eggs: 0 });
    expect(zero.statusCode, zero.body).toBe(201);
  });

  it('a transfer with the same source and destination is refused', async () => {
    const same = valid.container_transfer!.source_container_id;
    const body = await invalid(
      await post('container_transfer', { ...valid.container_transfer, dest_container_id: same }),
      ['dest_container_id'],
    );
    expect(body.issues![0]!.message).toMatch(/different/);
    await invalid(await put('container_transfer', { ...valid.container_transfer, dest_container_id: same }), [
      'dest_container_id',
    ]);
    await nothingWritten();
  });
});

describe('requests the service does not take', () => {
  it('a non-JSON content type is 415 EGGMESH_UNSUPPORTED_MEDIA_TYPE', async () => {
    const body = JSON.stringify(valid.farm);
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/xml',
      'multipart/form-data',
    ]) {
      await refused(await raw('POST', '/farm/api', body, type), 415, 'EGGMESH_UNSUPPORTED_MEDIA_TYPE');
      await refused(
        await raw('PUT', `/farm/api/${existing.farm!.id}`, body, type),
        415,
        'EGGMESH_UNSUPPORTED_MEDIA_TYPE',
      );
      await refused(
        await raw('POST', '/farm/api/bulk', `[${body}]`, type),
        415,
        'EGGMESH_UNSUPPORTED_MEDIA_TYPE',
      );
    }
    // A body without any content type is not JSON either.
    await refused(await raw('POST', '/farm/api', body), 415, 'EGGMESH_UNSUPPORTED_MEDIA_TYPE');
    await nothingWritten();
  });

  it('JSON with a charset parameter is accepted', async () => {
    const res = await raw('POST', '/farm/api', JSON.stringify(valid.farm), 'application/json; charset=utf-8');
    expect(res.statusCode, res.body).toBe(201);
  });

  it('an unknown entity is 404 EGGMESH_ROUTE_NOT_FOUND', async () => {
    await refused(await send(t.app, 'GET', '/chicken/api'), 404, 'EGGMESH_ROUTE_NOT_FOUND');
    await refused(await send(t.app, 'POST', '/chicken/api', valid.farm), 404, 'EGGMESH_ROUTE_NOT_FOUND');
    await refused(await send(t.app, 'GET', `/chicken/api/${newId()}`), 404, 'EGGMESH_ROUTE_NOT_FOUND');
    await refused(await send(t.app, 'DELETE', `/chicken/api/${newId()}`), 404, 'EGGMESH_ROUTE_NOT_FOUND');
    await refused(
      await send(t.app, 'POST', '/chicken/api/bulk', [valid.farm]),
      404,
      'EGGMESH_ROUTE_NOT_FOUND',
    );
    await refused(await send(t.app, 'GET', '/farm'), 404, 'EGGMESH_ROUTE_NOT_FOUND');
    await refused(await send(t.app, 'GET', '/'), 404, 'EGGMESH_ROUTE_NOT_FOUND');
    await nothingWritten();
  });

  it('a wrong method on a known path is 405 with an Allow header', async () => {
    const cases: [string, string, string[]][] = [
      ['PATCH', `/farm/api/${existing.farm!.id}`, ['GET', 'PUT', 'DELETE']],
      ['POST', `/farm/api/${existing.farm!.id}`, ['GET', 'PUT', 'DELETE']],
      ['DELETE', '/farm/api', ['GET', 'POST']],
      ['PUT', '/farm/api', ['GET', 'POST']],
      ['PATCH', '/lay_report/api', ['GET', 'POST']],
      ['DELETE', '/farm/api/bulk', ['GET', 'POST']],
      ['PUT', '/farm/api/bulk', ['GET', 'POST']],
      ['PATCH', '/farm/api/bulk', ['GET', 'POST']],
    ];
    for (const [method, url, allowed] of cases) {
      const res = await t.app.inject({
        method: method as 'PATCH',
        url,
        payload: JSON.stringify(valid.farm),
        headers: { 'content-type': 'application/json' },
      });
      const body = await refused(res, 405, 'EGGMESH_METHOD_NOT_ALLOWED');
      expect(body.error).toContain(method);
      const allow = String(res.headers.allow)
        .split(',')
        .map((m) => m.trim());
      for (const m of allowed) expect(allow, `${method} ${url}`).toContain(m);
      expect(allow, `${method} ${url}`).not.toContain(method);
    }
    // On a projection, any write method is refused the same way, saying why.
    const res = await send(t.app, 'PATCH', `/farm_output/api/${newId()}`, {});
    await refused(res, 405, 'EGGMESH_PROJECTION_READ_ONLY');
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
    await nothingWritten();
  });

  it('query parameters out of range are 400 EGGMESH_BAD_QUERY', async () => {
    for (const q of ['limit=abc', 'limit=0', 'limit=-3', 'at=yesterday', 'at=-1', 'limit=100000']) {
      await refused(await send(t.app, 'GET', `/farm/api?${q}`), 400, 'EGGMESH_BAD_QUERY');
    }
    await refused(
      await send(t.app, 'GET', `/farm/api/${existing.farm!.id}?at=soon`),
      400,
      'EGGMESH_BAD_QUERY',
    );
  });

  it('an unknown query parameter is 400 EGGMESH_BAD_QUERY naming it, never ignored', async () => {
    const hen = existing.hen!;
    for (const [path, name] of [
      [`/hen/api?coop_id=${hen.coop_id as string}`, 'coop_id'],
      ['/hen/api?limit=5&order_by=name', 'order_by'],
      [`/hen/api/${hen.id}?fields=name`, 'fields'],
      [`/hen/api/bulk?ids=${hen.id}&verbose=1`, 'verbose'],
    ] as const) {
      const body = await refused(await send(t.app, 'GET', path), 400, 'EGGMESH_BAD_QUERY');
      expect(body.error, path).toContain(`unknown query parameter "${name}"`);
    }
    // The parameters a route documents still work.
    const page = await send(t.app, 'GET', `/hen/api?limit=1&at=${Date.now()}`);
    expect(page.statusCode, page.body).toBe(200);
    expect(await send(t.app, 'GET', `/hen/api/${hen.id}?at=${Date.now()}`)).toMatchObject({
      statusCode: 200,
    });
    expect(await send(t.app, 'GET', `/hen/api/bulk?ids=${hen.id}`)).toMatchObject({ statusCode: 200 });
  });
});

describe('bulk requests', () => {
  it.each([
    ['an object', { items: [] }],
    ['a string', 'farms'],
    ['null', null],
    ['a number', 3],
  ])('a bulk body that is %s (not an array) is a 400 validation error', async (_label, body) => {
    await invalid(await bulk('farm', JSON.stringify(body)), []);
    await nothingWritten();
  });

  it('an empty array writes nothing', async () => {
    const res = await bulk('farm', []);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual([]);
    await nothingWritten();
  });

  it('a bad item anywhere refuses the whole request and names its index', async () => {
    for (const [at, bad, path] of [
      [0, { ...valid.farm, farm_type: 'ranch' }, 'farm_type'],
      [3, { ...valid.farm, colour: 'red' }, 'colour'],
      [4, { ...valid.farm, id: 'x' }, 'id'],
    ] as const) {
      const items: unknown[] = Array.from({ length: 5 }, () => ({ ...valid.farm, id: newId() }));
      items[at] = bad;
      const body = await invalid(await bulk('farm', items), [at, path]);
      expect(body.index).toBe(at);
      expect(body.issues!.every((i) => i.path[0] === at)).toBe(true);
      await nothingWritten();
    }
    const body = await invalid(await bulk('farm', [valid.farm, 'farm']), [1]);
    expect(body.index).toBe(1);
    await nothingWritten();
  });
});

describe('limits', () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await startApp({ EGGMESH_BODY_LIMIT_BYTES: '512', EGGMESH_BULK_MAX_ITEMS: '3' });
  });
  afterAll(async () => small.close());

  it('an oversized body is 413 EGGMESH_BODY_TOO_LARGE', async () => {
    const farm = { name: 'x'.repeat(600), farm_type: 'homestead', zone: 'north' };
    for (const [method, url, body] of [
      ['POST', '/farm/api', farm],
      ['PUT', `/farm/api/${newId()}`, farm],
      ['POST', '/farm/api/bulk', [farm]],
    ] as const) {
      const res = await send(small.app, method, url, body);
      expect(res.statusCode, res.body).toBe(413);
      const err = expectError(res, 413, 'EGGMESH_BODY_TOO_LARGE');
      expect(err.error).toContain('512');
    }
    // An oversized body that is not even JSON is still a 413, not a parse error.
    const junk = await small.app.inject({
      method: 'POST',
      url: '/farm/api',
      payload: '{'.repeat(2000),
      headers: { 'content-type': 'application/json' },
    });
    expectError(junk, 413, 'EGGMESH_BODY_TOO_LARGE');
    expect(await small.head()).toBe(0);
    // Just under the limit is fine.
    const ok = await send(small.app, 'POST', '/farm/api', { ...farm, name: 'x'.repeat(300) });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('a bulk request over EGGMESH_BULK_MAX_ITEMS is 400 EGGMESH_BULK_TOO_LARGE', async () => {
    const before = await small.head();
    const farm = { name: 'F', farm_type: 'homestead', zone: 'north' };
    const res = await send(small.app, 'POST', '/farm/api/bulk', [farm, farm, farm, farm]);
    const err = expectError(res, 400, 'EGGMESH_BULK_TOO_LARGE');
    expect(err.error).toContain('3');
    expect(await small.head()).toBe(before);
    const ids = [newId(), newId(), newId(), newId()].join(',');
    expectError(await send(small.app, 'GET', `/farm/api/bulk?ids=${ids}`), 400, 'EGGMESH_BULK_TOO_LARGE');
    const atLimit = await send(small.app, 'POST', '/farm/api/bulk', [farm, farm, farm]);
    expect(atLimit.statusCode, atLimit.body).toBe(201);
    expect(await small.head()).toBe(before + 3);
  });
});
