import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, fixture, ids, seed } from './helpers.js';

/**
 * Hostile and malformed requests. Every one is sent three times: mercurius caches a parsed document
 * and graphql-jit compiles it on its second execution, so a one-shot test would miss what breaks later.
 */
let f: Fixture;
beforeAll(async () => {
  f = await fixture();
  await seed(f);
});
afterAll(async () => f.close());

interface Sent {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: assertions walk arbitrary response JSON
  readonly body: any;
}

async function thrice(request: Parameters<Fixture['app']['inject']>[0]): Promise<Sent[]> {
  const out: Sent[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await f.app.inject(request as never);
    out.push({ status: r.statusCode, body: r.json() });
  }
  return out;
}

const post = (url: string, payload: unknown) => ({
  method: 'POST' as const,
  url,
  payload: payload as object,
});
const codes = (sent: Sent[]) => sent.map((s) => `${s.status} ${s.body.errors?.[0]?.extensions?.code}`);

describe('variables', () => {
  const byId = 'query ($id: ID!) { getById(id: $id) { id name } }';

  it.each([
    ['missing', { query: byId }],
    ['null', { query: byId, variables: null }],
    ['an object for an ID', { query: byId, variables: { id: { a: 1 } } }],
  ])('%s: 400 with a code on every run', async (_name, payload) => {
    const sent = await thrice(post('/farm/graph', payload));
    expect(codes(sent)).toEqual(Array(3).fill('400 GRAPHQL_VALIDATION_FAILED'));
  });

  it('an Int variable beyond 32 bits: 400 on every run', async () => {
    const q = 'query ($n: Int) { getAll(limit: $n) { name } }';
    const sent = await thrice(post('/farm/graph', { query: q, variables: { n: 1e12 } }));
    expect(codes(sent)).toEqual(Array(3).fill('400 GRAPHQL_VALIDATION_FAILED'));
  });

  it('GET without variables: 400 on every run', async () => {
    const sent = await thrice({ method: 'GET', url: '/farm/graph', query: { query: byId } });
    expect(codes(sent)).toEqual(Array(3).fill('400 GRAPHQL_VALIDATION_FAILED'));
  });

  it('the same document still answers once the variables are right', async () => {
    await thrice(post('/farm/graph', { query: byId }));
    const r = await f.app.inject(post('/farm/graph', { query: byId, variables: { id: ids.farm[0] } }));
    expect(r.statusCode).toBe(200);
    expect(r.json().data.getById.name).toBe('Sunny Acres');
  });
});

describe('requests that are not one GraphQL query', () => {
  it.each([
    [
      'a batch (array body)',
      post('/graphql', [{ query: '{ farms { id } }' }, { query: '{ farms { id } }' }]),
    ],
    [
      'a JSON null body',
      { method: 'POST', url: '/graphql', payload: 'null', headers: { 'content-type': 'application/json' } },
    ],
    [
      'a text/plain body',
      {
        method: 'POST',
        url: '/graphql',
        payload: '{ farms { id } }',
        headers: { 'content-type': 'text/plain' },
      },
    ],
    ['variables that are an array', post('/graphql', { query: '{ farms { id } }', variables: [1] })],
    ['extensions that are a number', post('/graphql', { query: '{ farms { id } }', extensions: 5 })],
    ['a GET mutation', { method: 'GET', url: '/graphql', query: { query: 'mutation { farms { id } }' } }],
  ] as const)('%s: 4xx with a code, every run', async (_name, request) => {
    const sent = await thrice(request);
    for (const s of sent) {
      expect(s.status).toBeGreaterThanOrEqual(400);
      expect(s.status).toBeLessThan(500);
      expect(s.body.errors[0].extensions.code).toMatch(/^(EGGMESH_|GRAPHQL_)/);
    }
  });

  it('an unknown operationName: 400 on every run', async () => {
    const q = 'query A { farms { id } } query B { farms { name } }';
    const sent = await thrice(post('/graphql', { query: q, operationName: 'C' }));
    expect(codes(sent)).toEqual(Array(3).fill('400 GRAPHQL_VALIDATION_FAILED'));
  });
});

/** Fragments that spread the one below twice: `levels` of them expand to 2^levels fields. */
function fragmentBomb(levels: number, type: string): string {
  const defs = [`fragment G0 on ${type} { id }`, `fragment G1 on ${type} { x1: id ...G0 ...G0 }`];
  for (let i = 2; i <= levels; i++) defs.push(`fragment G${i} on ${type} { ...G${i - 1} ...G${i - 1} }`);
  return defs.join(' ');
}

describe('documents that expand, nest or run long are refused before any work that can explode', () => {
  it.each([24, 30])('a fragment bomb of %i levels on /graphql and /farm/graph', async (levels) => {
    const unified = `{ farm(id: "${ids.farm[0]}") { ...G${levels} } } ${fragmentBomb(levels, 'Farm')}`;
    expect(unified.length).toBeLessThan(1300);
    expect(codes(await thrice(post('/graphql', { query: unified })))).toEqual(
      Array(3).fill('400 EGGMESH_GRAPHQL_TOO_MANY_FIELDS'),
    );
    const entity = `{ getById(id: "${ids.farm[0]}") { ...G${levels} } } ${fragmentBomb(levels, 'Farm')}`;
    expect(codes(await thrice(post('/farm/graph', { query: entity })))).toEqual(
      Array(3).fill('400 EGGMESH_GRAPHQL_TOO_MANY_FIELDS'),
    );
  });

  it('a bomb hidden in a fragment no operation uses', async () => {
    const q = `{ farm(id: "${ids.farm[0]}") { id } } ${fragmentBomb(30, 'Farm')}`;
    expect(codes(await thrice(post('/graphql', { query: q })))).toEqual(
      Array(3).fill('400 EGGMESH_GRAPHQL_TOO_MANY_FIELDS'),
    );
  });

  it('a small fragment tree within the cap still answers', async () => {
    const q = `{ farm(id: "${ids.farm[0]}") { ...G8 } } ${fragmentBomb(8, 'Farm')}`;
    const sent = await thrice(post('/graphql', { query: q }));
    expect(sent.map((s) => s.status)).toEqual([200, 200, 200]);
    expect(sent[2]?.body.data.farm.id).toBe(ids.farm[0]);
  });

  it('10,000 aliases of farm(id): refused (by size before parsing, by field count when it fits)', async () => {
    const aliases = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => `a${i}: farm(id: "${ids.farm[0]}") { id }`).join(' ')} }`;
    expect(codes(await thrice(post('/graphql', { query: aliases(10_000) })))).toEqual(
      Array(3).fill('400 EGGMESH_GRAPHQL_TOO_LARGE'),
    );
    const short = `{ ${Array.from({ length: 2100 }, (_, i) => `a${i}:farm(id:"x"){id}`).join(' ')} }`;
    const sent = await f.app.inject(post('/graphql', { query: short }));
    expect(sent.statusCode).toBe(400);
    expect(sent.json().errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_TOO_LARGE');
  });

  it('field count counts each alias and root field', async () => {
    const app = await fixture({
      env: { EGGMESH_GRAPHQL_MAX_DOCUMENT_BYTES: '1000000' },
      graphql: { maxFields: 10 },
    });
    try {
      const q = (n: number) =>
        `{ ${Array.from({ length: n }, (_, i) => `a${i}: farm(id: "x") { id }`).join(' ')} }`;
      const ok = await app.app.inject(post('/graphql', { query: q(5) }));
      expect(ok.statusCode).toBe(200);
      const refused = await app.app.inject(post('/graphql', { query: q(6) }));
      expect(refused.json().errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_TOO_MANY_FIELDS');
    } finally {
      await app.close();
    }
  });

  it('10,000 levels of nesting: a clean 400, not a stack overflow', async () => {
    const deep = `{ getById(id: "x") ${'{ coops '.repeat(10_000)}${'}'.repeat(10_000)} }`;
    const list = `{ getById(id: ${'['.repeat(10_000)}"x"${']'.repeat(10_000)}) { id } }`;
    for (const query of [deep, list]) {
      expect(codes(await thrice(post('/farm/graph', { query })))).toEqual(
        Array(3).fill('400 EGGMESH_GRAPHQL_TOO_LARGE'),
      );
    }
    const get = await thrice({ method: 'GET', url: '/farm/graph', query: { query: deep.slice(0, 3000) } });
    expect(codes(get)).toEqual(Array(3).fill('400 EGGMESH_GRAPHQL_TOO_LARGE'));
  });

  it('brackets inside strings and comments do not count as nesting', async () => {
    const q = `# ${'{'.repeat(500)}\n{ getByZone(zone: "${'['.repeat(500)}") { id } }`;
    const r = await f.app.inject(post('/farm/graph', { query: q }));
    expect(r.statusCode).toBe(200);
    expect(r.json().data.getByZone).toEqual([]);
  });

  it('too many tokens', async () => {
    const q = `{ getAll { ${'id '.repeat(6000)} } }`;
    expect(q.length).toBeLessThan(32_768);
    expect(codes(await thrice(post('/farm/graph', { query: q })))).toEqual(
      Array(3).fill('400 EGGMESH_GRAPHQL_TOO_LARGE'),
    );
  });
});
