// graphql's CommonJS build, as the app loads it (see src/graphql/runtime.ts).
import { buildSchema, getIntrospectionQuery, parse, validate } from 'graphql/index.js';
import { describe, expect, it } from 'vitest';
import { isJson } from '../src/graphql/json-source.js';
import { depthLimitRule, estimateCost, unifiedSdl } from '../src/index.js';

const schema = buildSchema(unifiedSdl({ defaultLimit: 1000, maxLimit: 10_000 }));
const model = { defaultLimit: 1000, maxLimit: 10_000, listFanOut: 10 };
const cost = (query: string, variables?: Record<string, unknown>, operationName?: string) =>
  estimateCost(schema, parse(query), operationName, variables, model);

describe('estimateCost', () => {
  it('counts rows: root lists by limit, relations by fan-out, scalars free', () => {
    expect(cost('{ farm(id: "x") { id name zone } }')).toBe(1);
    expect(cost('{ farm(id: "x") { coops { id } } }')).toBe(1 + 10);
    expect(cost('{ farm(id: "x") { coops { hens { layReports { id } } } } }')).toBe(1 + 10 + 100 + 1000);
    expect(cost('{ farms { id } }')).toBe(1000);
    expect(cost('{ farms(limit: 5) { coops { farm { id } } } }')).toBe(5 + 50 + 50);
    expect(cost('{ farms(limit: 1000000) { id } }')).toBe(10_000);
  });

  it('reads limit from variables and picks the named operation', () => {
    const doc = 'query A($n: Int) { farms(limit: $n) { id } } query B { farm(id: "x") { id } }';
    expect(cost(doc, { n: 7 }, 'A')).toBe(7);
    expect(cost(doc, {}, 'A')).toBe(1000);
    expect(cost(doc, {}, 'B')).toBe(1);
  });

  it('follows fragments and inline fragments, counting each spread', () => {
    const doc =
      'query { ...Q ...Q } fragment Q on Query { farms(limit: 2) { ...F } } fragment F on Farm { coops { id } ... on Farm { farmOutput { id } } }';
    expect(cost(doc)).toBe(2 * (2 + 2 * 10 + 2 * 10));
  });

  it('stays cheap on exponential fragment fan-out', () => {
    const defs = Array.from(
      { length: 40 },
      (_, i) => `fragment F${i} on Farm { ...F${i + 1} ...F${i + 1} }`,
    ).join(' ');
    const doc = `{ farm(id: "x") { ...F0 } } ${defs} fragment F40 on Farm { coops { id } }`;
    const started = performance.now();
    expect(cost(doc)).toBe(1 + 2 ** 40 * 10);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('ignores introspection', () => {
    expect(cost(getIntrospectionQuery())).toBe(0);
  });
});

describe('depthLimitRule', () => {
  const errors = (query: string, max: number) => validate(schema, parse(query), [depthLimitRule(max)]);

  it('counts nested fields; fragments add no level of their own', () => {
    expect(errors('{ farm(id: "x") { coops { id } } }', 3)).toEqual([]);
    expect(errors('{ farm(id: "x") { coops { hens { id } } } }', 3)).toHaveLength(1);
    expect(errors('{ farm(id: "x") { ...F } } fragment F on Farm { coops { id } }', 3)).toEqual([]);
    expect(errors('{ farm(id: "x") { ... on Farm { coops { hens { id } } } } }', 3)).toHaveLength(1);
  });

  it('reports a stable code naming the operation', () => {
    const [error] = errors('query Deep { farm(id: "x") { coops { hens { id } } } }', 2);
    expect(error?.extensions.code).toBe('EGGMESH_GRAPHQL_DEPTH');
    expect(error?.message).toBe('operation Deep nests 4 levels deep; the limit is 2');
  });

  it('skips introspection and survives fragment cycles', () => {
    expect(errors(getIntrospectionQuery(), 3)).toEqual([]);
    const cyclic = validate(
      schema,
      parse('{ farm(id: "x") { ...A } } fragment A on Farm { coops { farm { ...A } } }'),
      [depthLimitRule(3)],
    );
    expect(
      cyclic.every((e) => e.extensions.code === 'EGGMESH_GRAPHQL_DEPTH' || e.extensions.code === undefined),
    ).toBe(true);
  });
});

describe('isJson', () => {
  it.each(['{}', '{ }', '{"kind":"Document"}', '42', '-1', '[]', '"q"', 'true', ' null ', 'false'])(
    '%j is JSON',
    (s) => {
      expect(isJson(s)).toBe(true);
    },
  );
  it.each([
    '{ getAll { id } }',
    'query A { x }',
    'fragment F on Farm { id }',
    '{ "x" }',
    '',
    '   ',
    '# c\n{ x }',
    'falsey',
  ])('%j is not', (s) => {
    expect(isJson(s)).toBe(false);
  });
});
