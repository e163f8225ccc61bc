// graphql's CommonJS build, as the app loads it (see src/graphql/runtime.ts).
import type { EntityName } from '@eggmesh/schema';
import { buildSchema, type GraphQLError, getIntrospectionQuery, parse, validate } from 'graphql/index.js';
import { describe, expect, it } from 'vitest';
import { queries as perfQueries } from '../../../perf/src/scenarios/queries.js';
import { isJson } from '../src/graphql/json-source.js';
import {
  checkDocumentSize,
  checkShape,
  documentShapes,
  entitySdl,
  estimateCost,
  unifiedSdl,
} from '../src/index.js';

const schema = buildSchema(unifiedSdl({ defaultLimit: 1000, maxLimit: 10_000 }));
const model = { defaultLimit: 1000, maxLimit: 10_000 };
const cost = (query: string, variables?: Record<string, unknown>, operationName?: string) =>
  estimateCost(schema, parse(query), operationName, variables, model);

describe('estimateCost', () => {
  it('counts rows: lists by their limit (relations per parent row), singles 1, scalars free', () => {
    expect(cost('{ farm(id: "x") { id name zone } }')).toBe(1);
    expect(cost('{ farm(id: "x") { coops { id } } }')).toBe(1 + 1000);
    expect(
      cost('{ farm(id: "x") { coops(limit: 10) { hens(limit: 10) { layReports(limit: 10) { id } } } } }'),
    ).toBe(1 + 10 + 100 + 1000);
    expect(cost('{ farm(id: "x") { coops { hens { id } } } }')).toBe(1 + 1000 + 1_000_000);
    expect(cost('{ farms { id } }')).toBe(1000);
    expect(cost('{ farms(limit: 5) { coops(limit: 2) { farm { id } } } }')).toBe(5 + 10 + 10);
    expect(cost('{ farms(limit: 10000) { id } }')).toBe(10_000);
    expect(cost('{ farm(id: "x") { coops(limit: 10000) { id } } }')).toBe(1 + 10_000);
  });

  it('counts a limit outside 1..max as no rows: the field itself fails when it runs (EGGMESH_BAD_QUERY)', () => {
    expect(cost('{ farms(limit: 10001) { id } farm(id: "x") { id } }')).toBe(1);
    expect(cost('{ farm(id: "x") { coops(limit: 0) { hens { id } } } }')).toBe(1);
    expect(cost('query ($n: Int) { farms(limit: $n) { coops { id } } }', { n: -1 })).toBe(0);
    expect(cost('query ($n: Int) { farms(limit: $n) { id } }', { n: 10_000 })).toBe(10_000);
    // Not an Int at all: left to graphql's variable coercion, which refuses it the same way on every run.
    expect(cost('query ($n: Int) { farms(limit: $n) { id } }', { n: 2 ** 32 })).toBe(1000);
  });

  it('counts every root field and alias', () => {
    expect(cost('{ a: farm(id: "x") { id } b: farm(id: "y") { id } farms(limit: 3) { id } }')).toBe(5);
    const aliases = Array.from({ length: 1000 }, (_, i) => `a${i}: farms(limit: 1000) { id }`).join(' ');
    expect(cost(`{ ${aliases} }`)).toBe(1_000_000);
  });

  it('caps each field at the rows a response may carry', () => {
    const capped = (query: string) =>
      estimateCost(schema, parse(query), undefined, undefined, { ...model, maxRows: 100_000 });
    expect(capped('{ farm(id: "x") { coops { hens { id } } } }')).toBe(1 + 1000 + 100_000);
    expect(capped('{ farms { coops { hens { layReports { id } } } } }')).toBe(1000 + 3 * 100_000);
    expect(capped('{ farms(limit: 10) { coops(limit: 5) { id } } }')).toBe(10 + 50);
  });

  it('reads relation limits from variables', () => {
    const doc = 'query ($n: Int) { farm(id: "x") { coops(limit: $n) { id } } }';
    expect(cost(doc, { n: 7 })).toBe(8);
    expect(cost(doc, { n: 9 })).toBe(10);
    expect(cost(doc, {})).toBe(1001);
  });

  it('reads limit from variables and picks the named operation', () => {
    const doc = 'query A($n: Int) { farms(limit: $n) { id } } query B { farm(id: "x") { id } }';
    expect(cost(doc, { n: 7 }, 'A')).toBe(7);
    expect(cost(doc, {}, 'A')).toBe(1000);
    expect(cost(doc, {}, 'B')).toBe(1);
  });

  it('follows fragments and inline fragments, counting each spread', () => {
    const doc =
      'query { ...Q ...Q } fragment Q on Query { farms(limit: 2) { ...F } } fragment F on Farm { coops(limit: 10) { id } ... on Farm { farmOutput(limit: 1) { id } } }';
    expect(cost(doc)).toBe(2 * (2 + 2 * 10 + 2 * 1));
  });

  it('stays cheap on exponential fragment fan-out', () => {
    const defs = Array.from(
      { length: 40 },
      (_, i) => `fragment F${i} on Farm { ...F${i + 1} ...F${i + 1} }`,
    ).join(' ');
    const doc = `{ farm(id: "x") { ...F0 } } ${defs} fragment F40 on Farm { coops(limit: 10) { id } }`;
    expect(cost(doc)).toBe(1 + 2 ** 40 * 10);
  });

  it('ignores introspection', () => {
    expect(cost(getIntrospectionQuery())).toBe(0);
  });
});

describe('checkShape: depth', () => {
  const errors = (query: string, maxDepth: number) => {
    try {
      checkShape(parse(query), { maxDepth, maxFields: 2000 });
      return [];
    } catch (error) {
      return [error as GraphQLError];
    }
  };

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
    expect(errors('{ farm(id: "x") { ...A } } fragment A on Farm { coops { farm { ...A } } }', 3)).toEqual(
      [],
    );
  });
});

describe('documentShapes: expanded field counts', () => {
  const fields = (query: string) => documentShapes(parse(query)).operations.map((o) => o.shape.fields);

  it('counts every field, alias and spread', () => {
    expect(fields('{ farm(id: "x") { id name } }')).toEqual([3]);
    expect(fields('{ a: farm(id: "x") { id } b: farm(id: "x") { id } }')).toEqual([4]);
    expect(fields('{ farm(id: "x") { ...F ...F } } fragment F on Farm { id coops { id } }')).toEqual([7]);
    expect(fields('query A { farms { id } } query B { farm(id: "x") { id name } }')).toEqual([2, 3]);
  });

  it('is linear on doubling fragment chains, and names the fragments', () => {
    const defs = Array.from({ length: 60 }, (_, i) => `fragment F${i} on Farm { ...F${i + 1} ...F${i + 1} }`);
    const doc = `{ farm(id: "x") { ...F0 } } ${defs.join(' ')} fragment F60 on Farm { id }`;
    const shapes = documentShapes(parse(doc));
    expect(shapes.operations[0]?.shape.fields).toBe(1 + 2 ** 60);
    expect(shapes.fragments.find((f) => f.name === 'F59')?.shape.fields).toBe(2);
  });

  it('keeps the introspection query GraphiQL sends well within the default cap', () => {
    expect(fields(getIntrospectionQuery())[0]).toBeLessThan(500);
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

describe('checkDocumentSize', () => {
  const limits = { maxBytes: 200, maxNesting: 3 };
  const code = (source: string) => {
    try {
      checkDocumentSize(source, limits);
      return undefined;
    } catch (error) {
      return (error as GraphQLError).extensions.code;
    }
  };

  it('counts bracket nesting outside strings, block strings and comments', () => {
    expect(code('{ a { b { c } } }')).toBeUndefined();
    expect(code('{ a { b { c { d } } } }')).toBe('EGGMESH_GRAPHQL_TOO_LARGE');
    expect(code('{ a(x: [[1]]) }')).toBe('EGGMESH_GRAPHQL_TOO_LARGE');
    expect(code('{ a(x: "{{{{ \\" {{{{") }')).toBeUndefined();
    expect(code('{ a(x: """ {{{{ \\""" {{{{ """) }')).toBeUndefined();
    expect(code('# {{{{{\n{ a }')).toBeUndefined();
  });

  it('measures bytes, not characters', () => {
    expect(code(`{ a(x: "${'é'.repeat(90)}") }`)).toBeUndefined();
    expect(code(`{ a(x: "${'é'.repeat(100)}") }`)).toBe('EGGMESH_GRAPHQL_TOO_LARGE');
  });
});

describe('the queries the perf scenarios send stay well within the default limits', () => {
  // perf/src/scenarios/queries.ts: MeshQL-shaped documents, sent to the endpoint of the entity they
  // start from (the names say which).
  const entityOf = (name: string): EntityName => {
    if (name.startsWith('farmOutput')) return 'farm_output';
    if (name.startsWith('inventory')) return 'container_inventory';
    if (name.startsWith('henProductivity')) return 'hen_productivity';
    if (name.startsWith('coops')) return 'coop';
    if (name.startsWith('hens')) return 'hen';
    if (name.startsWith('hen')) return 'hen';
    if (name.startsWith('container')) return 'container';
    if (name.startsWith('consumer')) return 'consumer';
    return 'farm';
  };
  const defaults = { defaultLimit: 1000, maxLimit: 10_000, maxRows: 100_000 };

  it.each(Object.entries(perfQueries))('%s', (name, query) => {
    const endpoint = buildSchema(entitySdl(entityOf(name), defaults));
    const document = parse(query);
    expect(validate(endpoint, document)).toEqual([]);
    const [operation] = documentShapes(document).operations;
    expect(operation?.shape.fields).toBeLessThan(2000 / 50);
    expect(operation?.shape.depth).toBeLessThanOrEqual(4);
    expect(estimateCost(endpoint, document, undefined, { limit: 1000 }, defaults)).toBeLessThan(
      2_000_000 / 10,
    );
  });
});
