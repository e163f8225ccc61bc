import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, fixture, gql, ids, seed } from './helpers.js';

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
  await seed(f);
});
afterAll(async () => f.close());

const codeOf = (body: { errors?: Array<{ extensions?: { code?: string } }> }) =>
  body.errors?.[0]?.extensions?.code;

describe('depth limit (8 by default)', () => {
  const chain = (levels: number): string => {
    // farm → coops → farm → coops … ending on a scalar: `levels` fields deep.
    let inner = 'id';
    for (let i = levels - 1; i > 1; i--) inner = `${i % 2 === 0 ? 'coops' : 'farm'} { ${inner} }`;
    return `{ getById(id: "${ids.farm[0]}") { ${inner} } }`;
  };

  it('accepts a query at the limit', async () => {
    const r = await gql(f.app, '/farm/graph', chain(8));
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
  });

  it('refuses one level more, also when hidden in fragments', async () => {
    const r = await gql(f.app, '/farm/graph', chain(9));
    expect(r.status).toBe(400);
    expect(codeOf(r.body)).toBe('EGGMESH_GRAPHQL_DEPTH');
    const viaFragments = await gql(
      f.app,
      '/graphql',
      'query { farms(limit: 1) { ...A } } fragment A on Farm { coops { farm { ...B } } } fragment B on Farm { coops { farm { coops { farm { coops { id } } } } } }',
    );
    expect(codeOf(viaFragments.body)).toBe('EGGMESH_GRAPHQL_DEPTH');
  });

  it('lets the introspection query GraphiQL sends through', async () => {
    const r = await gql(f.app, '/graphql', getIntrospectionQuery());
    expect(r.status).toBe(200);
    expect(r.body.data.__schema.queryType.name).toBe('Query');
  });
});

describe('cost limit (2,000,000 estimated rows by default)', () => {
  // Lists count their limit (default 1000, per parent row for relations); each field's rows are
  // capped at the 100,000 rows a response may carry. One of these costs 1000 + 100,000 + 100,000.
  const fanOut = 'getAll { coops { hens { id } } }';
  const meshql = 'getAll { coops { hens { layReports { id } } } }';
  const aliases = (n: number, shape: string) =>
    Array.from({ length: n }, (_, i) => `a${i}: ${shape}`).join(' ');

  it('refuses lists fanning out through list relations, repeated', async () => {
    const r = await gql(f.app, '/farm/graph', `{ ${aliases(10, fanOut)} }`);
    expect(r.status).toBe(400);
    expect(codeOf(r.body)).toBe('EGGMESH_GRAPHQL_COST');
    expect(r.body.data).toBeNull();
  });

  it("accepts MeshQL's nested getAll, and the repeated shape with small limits, literal or variable", async () => {
    expect((await gql(f.app, '/farm/graph', `{ ${meshql} }`)).body.errors).toBeUndefined();
    const limited = fanOut.replace('coops', 'coops(limit: 20)').replace('hens', 'hens(limit: 20)');
    expect((await gql(f.app, '/farm/graph', `{ ${aliases(10, limited)} }`)).body.errors).toBeUndefined();
    const q = `query ($n: Int) { ${aliases(10, fanOut.replace('coops', 'coops(limit: $n)'))} }`;
    expect((await gql(f.app, '/farm/graph', q, { variables: { n: 20 } })).body.errors).toBeUndefined();
    expect(codeOf((await gql(f.app, '/farm/graph', q, { variables: { n: 1000 } })).body)).toBe(
      'EGGMESH_GRAPHQL_COST',
    );
  });

  it('counts aliases and fragment spreads, so repetition cannot hide cost', async () => {
    expect((await gql(f.app, '/farm/graph', `{ ${aliases(6, meshql)} }`)).body.errors).toBeUndefined();
    expect(codeOf((await gql(f.app, '/farm/graph', `{ ${aliases(7, meshql)} }`)).body)).toBe(
      'EGGMESH_GRAPHQL_COST',
    );
    const spreads = (n: number) =>
      `query { ${'...Q '.repeat(n)}} fragment Q on Query { ${aliases(4, meshql)} }`;
    expect((await gql(f.app, '/farm/graph', spreads(1))).body.errors).toBeUndefined();
    expect(codeOf((await gql(f.app, '/farm/graph', spreads(2))).body)).toBe('EGGMESH_GRAPHQL_COST');
  });

  it('refuses before running a query whose full answer would exceed the response byte cap (rows × fields)', async () => {
    const shape = (fields: string) =>
      `farms(limit: 100) { ${fields} coops(limit: 10) { ${fields} hens(limit: 10) { ${fields} } } }`;
    // 150 × 11,100 rows: within the row estimate (2,000,000), but 32 MiB would be refused once read.
    for (const fields of ['id name', 'id']) {
      const hostile = await gql(f.app, '/graphql', `{ ${aliases(150, shape(fields))} }`);
      expect(hostile.status, fields).toBe(400);
      expect(codeOf(hostile.body), fields).toBe('EGGMESH_GRAPHQL_COST');
      expect(hostile.body.errors?.[0]?.message, fields).toMatch(/at most 33554432/);
      expect(hostile.body.data).toBeNull();
    }
    const modest = await gql(f.app, '/graphql', `{ ${aliases(10, shape('id name'))} }`);
    expect(modest.body.errors).toBeUndefined();
    expect(modest.body.data.a0.length).toBeGreaterThan(0);
  });

  it('keeps a dashboard query (a list with single relations) within the limit', async () => {
    const r = await gql(
      f.app,
      '/consumption_report/graph',
      '{ getAll { id eggs consumer { name } container { name } } }',
    );
    expect(r.body.errors).toBeUndefined();
  });
});

describe('malformed requests get coded GraphQL errors, never a 500', () => {
  const cases: Array<[string, string, string]> = [
    ['a syntax error', '{ getById(id: ', 'GRAPHQL_PARSE_FAILED'],
    ['an unknown field', '{ getById(id: "x") { nope } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['an unknown query', '{ getByColour(id: "x") { id } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['a wrong argument type', '{ getAll(limit: "ten") { id } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['a mutation (there are none)', 'mutation { getAll { id } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['JSON instead of GraphQL', '{}', 'GRAPHQL_PARSE_FAILED'],
    ['a JSON number', '42', 'GRAPHQL_PARSE_FAILED'],
    ['a JSON AST', JSON.stringify({ kind: 'Document', definitions: [{}] }), 'GRAPHQL_PARSE_FAILED'],
    ['an empty document', '   ', 'GRAPHQL_PARSE_FAILED'],
  ];
  it.each(cases)('%s', async (_name, query, code) => {
    const r = await gql(f.app, '/farm/graph', query);
    expect(r.status).toBe(400);
    expect(r.body.data).toBeNull();
    expect(codeOf(r.body)).toBe(code);
  });

  it('variables of the wrong type', async () => {
    const r = await gql(f.app, '/farm/graph', 'query ($n: Int) { getAll(limit: $n) { id } }', {
      variables: { n: 'many' },
    });
    expect(r.status).toBe(400);
    expect(codeOf(r.body)).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('an unknown operationName', async () => {
    const r = await gql(f.app, '/farm/graph', 'query A { getAll { id } }', { operationName: 'B' });
    expect(r.status).toBe(400);
    expect(codeOf(r.body)).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it.each([
    ['no query', { method: 'POST', payload: {} }],
    ['a query that is an object', { method: 'POST', payload: { query: { a: 1 } } }],
    [
      'variables that are not an object',
      { method: 'POST', payload: { query: '{ getAll { id } }', variables: 'x' } },
    ],
    [
      'a body that is not JSON',
      { method: 'POST', payload: '{"query":', headers: { 'content-type': 'application/json' } },
    ],
    [
      'GET variables that are not JSON',
      { method: 'GET', query: { query: '{ getAll { id } }', variables: '{nope' } },
    ],
  ] as const)('%s', async (_name, request) => {
    const r = await f.app.inject({ url: '/farm/graph', ...request });
    expect(r.statusCode).toBe(400);
    expect(r.json().errors[0].extensions.code).toBe('EGGMESH_GRAPHQL_BAD_REQUEST');
  });
});
