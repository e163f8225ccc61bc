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
