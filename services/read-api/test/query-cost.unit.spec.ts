// graphql's CommonJS build, as the app loads it (see src/graphql/runtime.ts).
import { buildSchema, parse } from 'graphql/index.js';
import { describe, expect, it } from 'vitest';
import { estimateCost, unifiedSdl } from '../src/index.js';

const schema = buildSchema(unifiedSdl({ defaultLimit: 100, maxLimit: 1000 }));
const model = { defaultLimit: 100, maxLimit: 1000 };
const cost = (query: string, variables?: Record<string, unknown>) =>
  estimateCost(schema, parse(query), undefined, variables, model);

describe('estimateCost of connections', () => {
  it('counts first rows, each comparison and sort key, and a total count as a page of the maximum', () => {
    expect(cost('{ hensConnection { nodes { id } } }')).toBe(100);
    expect(
      cost(
        '{ hensConnection(first: 20) { nodes { id } edges { cursor node { id } } pageInfo { hasNextPage } } }',
      ),
    ).toBe(20);
    expect(
      cost(
        '{ hensConnection(first: 20, where: { breed: { eq: "x" }, dob: { gte: "a", lt: "b" } }) { nodes { id } } }',
      ),
    ).toBe(23);
    expect(
      cost('{ hensConnection(first: 20, orderBy: [{ dob: DESC }, { breed: ASC }]) { nodes { id } } }'),
    ).toBe(22);
    expect(cost('{ hensConnection(first: 20) { totalCount } }')).toBe(20 + 1000);
    expect(cost('{ hensConnection(first: 1001) { nodes { id } } }')).toBe(0);
  });

  it('reads first, where and orderBy from variables, and counts relations below the nodes per row', () => {
    expect(
      cost(
        'query ($w: HenWhere, $n: Int) { hensConnection(first: $n, where: $w) { nodes { coop { id } } } }',
        {
          n: 10,
          w: { or: [{ breed: { in: ['a', 'b'] } }, { status: { eq: 'active' } }] },
        },
      ),
    ).toBe(10 + 3 + 10);
    expect(cost('{ coopsConnection(first: 5) { nodes { hens(limit: 10) { id } } } }')).toBe(5 + 50);
  });

  it('counts a filtered or sorted list relation twice per parent row, plus its terms per parent', () => {
    // 5 coops; 10 hens each as their page, 10 more each a parent with more matches can make the
    // batch read, and one comparison and one sort key per coop.
    expect(
      cost(
        '{ coopsConnection(first: 5) { nodes { hens(limit: 10, where: { breed: { eq: "x" } }, orderBy: [{ dob: DESC }]) { id } } } }',
      ),
    ).toBe(5 + 50 + 50 + 5 * 2);
    expect(
      cost(
        'query ($w: HenWhere) { farm(id: "x") { coops(limit: 4) { hens(limit: 3, where: $w) { id } } } }',
        {
          w: { status: { in: ['active', 'retired'] } },
        },
      ),
    ).toBe(1 + 4 + (12 + 12 + 4 * 2));
  });

  it('counts an aggregate as a page of the maximum of groups plus its comparisons', () => {
    expect(
      cost(
        '{ layReportsAggregate(groupBy: [farm_id], bucket: DAY, where: { timestamp: { gte: "a", lt: "b" } }) { group { farm_id } count sum { eggs } } }',
      ),
    ).toBe(1000 + 2);
  });
});
