// Issue 11: odd queries, odd methods, far-future timestamps and bulk reads by POST.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, newId, type Payload, Samples, send, startApp, type TestApp } from './helpers.js';

let t: TestApp;
let samples: Samples;

beforeAll(async () => {
  t = await startApp();
  samples = new Samples(t.app);
});
afterAll(async () => t.close());

describe('query strings', () => {
  it.each([
    ['/farm/api?limit=1.5', 'limit'],
    ['/farm/api?limit=0x10', 'limit'],
    ['/farm/api?limit=1&limit=2', 'limit'],
    ['/farm/api?after=x&after=y', 'after'],
    ['/farm/api?at=1&at=2', 'at'],
    ['/farm/api/bulk?ids=a&ids=b', 'ids'],
    [`/farm/api/${newId()}?at=1&at=2`, 'at'],
    ['/farm/api?at=-1', 'at'],
    ['/farm/api?limit=10001', 'limit'],
  ])('%s is 400 EGGMESH_BAD_QUERY naming %s', async (url, field) => {
    const err = expectError(await send(t.app, 'GET', url), 400, 'EGGMESH_BAD_QUERY') as { error: string };
    expect(err.error).toContain(field);
  });

  it('a bulk read with an empty id in the list is 400', async () => {
    expectError(
      await send(t.app, 'GET', `/farm/api/bulk?ids=${newId()},,${newId()}`),
      400,
      'EGGMESH_BAD_QUERY',
    );
  });
});

describe('methods', () => {
  it.each(['QUERY', 'PROPFIND', 'SEARCH', 'MKCOL', 'LOCK'])(
    '%s on a known path is 405 with an Allow header',
    async (method) => {
      const res = await t.app.inject({ method: method as 'GET', url: '/farm/api' });
      expectError(res, 405, 'EGGMESH_METHOD_NOT_ALLOWED');
      expect(String(res.headers.allow)).toMatch(/GET/);
      expect(String(res.headers.allow)).not.toContain(method);
    },
  );

  it('an unknown method on an unknown path is 404 EGGMESH_ROUTE_NOT_FOUND', async () => {
    expectError(
      await t.app.inject({ method: 'PROPFIND' as 'GET', url: '/nope' }),
      404,
      'EGGMESH_ROUTE_NOT_FOUND',
    );
  });
});

describe('timestamps in the future', () => {
  // The test clock starts at 2026-03-01T12:00:00Z and moves 1 ms per call.
  it('a timestamp later than now + 24 h is 400 naming the field and the bound', async () => {
    const payload = { ...(await samples.payload('lay_report')), timestamp: '2026-03-02T12:00:01Z' };
    const res = await send(t.app, 'POST', '/lay_report/api', payload);
    const err = expectError(res, 400, 'EGGMESH_VALIDATION') as {
      issues: { path: unknown[]; code: string; message: string }[];
    };
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]!.path).toEqual(['timestamp']);
    expect(err.issues[0]!.code).toBe('too_far_in_future');
    expect(err.issues[0]!.message).toContain('86400000 ms');
  });

  it('within the bound is accepted, also on bulk and PUT; a bulk names the item', async () => {
    const ok = { ...(await samples.payload('storage_deposit')), timestamp: '2026-03-02T11:00:00Z' };
    const created = await send(t.app, 'POST', '/storage_deposit/api', ok);
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as Payload).id as string;
    const far = { ...ok, timestamp: '2031-01-01T00:00:00+02:00' };
    const put = expectError(
      await send(t.app, 'PUT', `/storage_deposit/api/${id}`, far),
      400,
      'EGGMESH_VALIDATION',
    );
    expect((put as { issues: { path: unknown[] }[] }).issues[0]!.path).toEqual(['timestamp']);
    const bulk = expectError(
      await send(t.app, 'POST', '/storage_deposit/api/bulk', [ok, far]),
      400,
      'EGGMESH_VALIDATION',
    ) as { index: number; issues: { path: unknown[] }[] };
    expect(bulk.index).toBe(1);
    expect(bulk.issues[0]!.path).toEqual([1, 'timestamp']);
  });

  it('the bound is a setting', async () => {
    const strict = await startApp({ EGGMESH_MAX_FUTURE_MS: '0' });
    try {
      const s = new Samples(strict.app);
      const payload = { ...(await s.payload('lay_report')), timestamp: '2026-03-01T13:00:00Z' };
      expectError(await send(strict.app, 'POST', '/lay_report/api', payload), 400, 'EGGMESH_VALIDATION');
    } finally {
      await strict.close();
    }
  });
});

describe('bulk reads', () => {
  it('GET bulk finds ids given in upper case', async () => {
    const row = (await send(t.app, 'POST', '/farm/api', await samples.payload('farm'))).json() as Payload;
    const res = await send(t.app, 'GET', `/farm/api/bulk?ids=${String(row.id).toUpperCase()}`);
    expect(res.json()).toEqual([row]);
  });

  it('POST /bulk/read takes as many ids as the bulk limit, in the order asked', async () => {
    const rows: Payload[] = [];
    for (let i = 0; i < 3; i++) {
      rows.push((await send(t.app, 'POST', '/farm/api', await samples.payload('farm'))).json() as Payload);
    }
    const ids = Array.from({ length: 997 }, () => newId());
    ids.splice(10, 0, String(rows[2]!.id).toUpperCase());
    ids.splice(500, 0, String(rows[0]!.id));
    ids.push(String(rows[1]!.id));
    expect(ids).toHaveLength(1000);
    const res = await send(t.app, 'POST', '/farm/api/bulk/read', { ids });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([rows[2], rows[0], rows[1]]);
    expectError(
      await send(t.app, 'POST', '/farm/api/bulk/read', { ids: [...ids, newId()] }),
      400,
      'EGGMESH_BULK_TOO_LARGE',
    );
  });

  it('POST /bulk/read refuses an empty list, a non-UUID and unknown fields; reads `at`', async () => {
    expectError(await send(t.app, 'POST', '/farm/api/bulk/read', { ids: [] }), 400, 'EGGMESH_VALIDATION');
    expectError(
      await send(t.app, 'POST', '/farm/api/bulk/read', { ids: ['nope'] }),
      400,
      'EGGMESH_VALIDATION',
    );
    expectError(
      await send(t.app, 'POST', '/farm/api/bulk/read', { ids: [newId()], x: 1 }),
      400,
      'EGGMESH_VALIDATION',
    );
    const row = (await send(t.app, 'POST', '/farm/api', await samples.payload('farm'))).json() as Payload;
    const before = await send(t.app, 'POST', '/farm/api/bulk/read', { ids: [row.id], at: 0 });
    expect(before.json()).toEqual([]);
  });

  it('projections answer POST /bulk/read too, and it writes nothing', async () => {
    const head = await t.head();
    const res = await send(t.app, 'POST', '/container_inventory/api/bulk/read', { ids: [newId()] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([]);
    expect(res.headers['x-log-position']).toBeUndefined();
    expect(await t.head()).toBe(head);
  });

  it('other methods on /bulk/read are 405 naming POST', async () => {
    const res = await send(t.app, 'GET', '/farm/api/bulk/read');
    expectError(res, 405, 'EGGMESH_METHOD_NOT_ALLOWED');
    expect(String(res.headers.allow)).toContain('POST');
  });
});

describe('/openapi.json is derived from the routes', () => {
  type Operation = {
    parameters?: { name: string; in: string; schema: Record<string, unknown> }[];
    requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
    responses: Record<string, unknown>;
  };
  const operations = async () => {
    const doc = (await send(t.app, 'GET', '/openapi.json')).json() as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );
    return { doc, ops };
  };

  it('lists every status each operation can send', async () => {
    const { ops } = await operations();
    // 10 client entities × 8 operations, 3 projections × 4, /health and /ready.
    expect(ops).toHaveLength(10 * 8 + 3 * 4 + 2);
    for (const { path, method, op } of ops) {
      const statuses = Object.keys(op.responses);
      for (const s of ['400', '431', '500']) expect(statuses, `${method} ${path}`).toContain(s);
      if (op.requestBody || method === 'delete') {
        for (const s of ['413', '415']) expect(statuses, `${method} ${path}`).toContain(s);
      }
      if (path.endsWith('{id}')) expect(statuses, `${method} ${path}`).toContain('404');
      if (method === 'post' && !path.endsWith('/read'))
        expect(statuses, `${method} ${path}`).toContain('409');
    }
  });

  it('allows only what the server accepts', async () => {
    const { doc, ops } = await operations();
    const list = ops.find((o) => o.path === '/farm/api' && o.method === 'get')!.op;
    const param = (name: string) => list.parameters!.find((p) => p.name === name)!.schema;
    expect(param('limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 10_000 });
    expect(param('at')).toMatchObject({ minimum: 0 });
    const read = ops.find((o) => o.path === '/farm/api/bulk/read')!.op;
    expect(read.requestBody!.content['application/json']!.schema).toMatchObject({
      properties: { ids: { minItems: 1, maxItems: 1000 } },
    });
    expect(doc.components.schemas.FarmInput).toBeDefined();
    expect(doc.components.schemas.Coop!.properties).toMatchObject({ capacity: { maximum: 2_147_483_647 } });
    const ts = (doc.components.schemas.LayReportInput!.properties as Record<string, { description?: string }>)
      .timestamp!;
    expect(ts.description).toMatch(/EGGMESH_MAX_FUTURE_MS/);
  });

  it('the documented limits are the enforced ones', async () => {
    expect((await send(t.app, 'GET', '/farm/api?limit=10000')).statusCode).toBe(200);
    expectError(await send(t.app, 'GET', '/farm/api?limit=10001'), 400, 'EGGMESH_BAD_QUERY');
  });
});

describe('found by schemathesis against the generated document', () => {
  it('TRACE (or any other method) on /health and /ready is 405', async () => {
    for (const url of ['/health', '/ready']) {
      const res = await t.app.inject({ method: 'TRACE' as 'GET', url });
      expectError(res, 405, 'EGGMESH_METHOD_NOT_ALLOWED');
      expect(String(res.headers.allow)).toContain('GET');
    }
  });

  it('the PUT body schema has no id: the path names the entity', async () => {
    const doc = (await send(t.app, 'GET', '/openapi.json')).json() as {
      paths: Record<
        string,
        Record<string, { requestBody: { content: Record<string, { schema: { $ref: string } }> } }>
      >;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const ref = doc.paths['/farm/api/{id}']!.put!.requestBody.content['application/json']!.schema.$ref;
    const schema = doc.components.schemas[ref.split('/').pop()!]!;
    expect(Object.keys(schema.properties)).not.toContain('id');
    expect(Object.keys(schema.properties)).toContain('name');
  });

  it('GET bulk with bulkMaxItems ids fits in the request over a real socket (no 431)', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const ids = Array.from({ length: 1000 }, () => newId()).join(',');
    const ok = await fetch(`${address}/farm/api/bulk?ids=${ids}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual([]);
    const over = await fetch(`${address}/farm/api/bulk?ids=${ids},${newId()}`);
    expect(over.status).toBe(400);
    expect(((await over.json()) as { code: string }).code).toBe('EGGMESH_BULK_TOO_LARGE');
    const huge = await fetch(`${address}/farm/api`, { headers: { 'x-big': 'x'.repeat(100_000) } });
    expect(huge.status).toBe(431);
    expect(((await huge.json()) as { code: string }).code).toBe('EGGMESH_HEADERS_TOO_LARGE');
  });
});
