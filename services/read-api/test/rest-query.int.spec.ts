// REST list filters, sort and cursor (`?where=&sort=&limit=&after=`) answer what the GraphQL
// connection answers for the same arguments: the same rows, pages and cursors, at any `at`.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, fixture, gql, uuid } from './helpers.js';

const coops = [uuid(2, 1), uuid(2, 2), uuid(2, 3)];
const breeds = ['leghorn', 'silkie', 'orpington'];
const statuses = ['active', 'retired', 'deceased'];
const hens = Array.from({ length: 14 }, (_, i) => ({
  id: uuid(3, i + 1),
  payload: {
    name: `hen ${i}`,
    coop_id: coops[i % 3] as string,
    breed: breeds[i % 3] as string,
    // Some hens have no status or dob: a comparison on a missing field is false.
    ...(i % 4 === 3 ? {} : { status: statuses[i % 2] }),
    ...(i % 5 === 4 ? {} : { dob: `2025-${String((i % 9) + 1).padStart(2, '0')}-0${(i % 3) + 1}` }),
  },
}));
const reports = Array.from({ length: 12 }, (_, i) => ({
  id: uuid(4, i + 1),
  payload: {
    hen_id: hens[i % 5]?.id,
    coop_id: coops[i % 3],
    farm_id: uuid(1, (i % 2) + 1),
    eggs: i % 4,
    quality: ['grade_a', 'grade_b', 'cracked'][i % 3],
    // Offsets other than Z: text order is not time order.
    timestamp: `2026-11-${10 + (i % 6)}T${String(8 + i).padStart(2, '0')}:00:00${i % 2 ? '+02:00' : 'Z'}`,
  },
}));
let f: Fixture;
/** Walks done and rows they saw: the properties must see rows, not only empty answers. */
let walks = 0;
let rowsSeen = 0;
/** A time after the first writes and before the second ones. */
let between: number;

beforeAll(async () => {
  f = await fixture({ env: { EGGMESH_LIST_DEFAULT_LIMIT: '4', EGGMESH_LIST_MAX_LIMIT: '50' } });
  await f.write(hens.slice(0, 10).map(({ id, payload }) => ({ op: 'create', entity: 'hen', id, payload })));
  await f.write(reports.map(({ id, payload }) => ({ op: 'create', entity: 'lay_report', id, payload })));
  between = f.advance(10);
  f.advance(10);
  await f.write([
    ...hens
      .slice(10)
      .map(({ id, payload }) => ({ op: 'create' as const, entity: 'hen' as const, id, payload })),
    // Versions after `between`: a past `at` sees the old values.
    {
      op: 'update',
      entity: 'hen',
      id: hens[0]!.id,
      payload: { ...hens[0]!.payload, breed: 'silkie', status: 'deceased' },
    },
    { op: 'delete', entity: 'hen', id: hens[1]!.id },
  ]);
});
afterAll(async () => f.close());

type Where = Record<string, unknown>;
interface Args {
  readonly where?: Where;
  readonly sort: ReadonlyArray<readonly [string, 'ASC' | 'DESC']>;
  readonly limit: number;
  readonly at?: number;
}

const connectionQuery = (type: string, field: string, selection: string) => `
query ($where: ${type}Where, $orderBy: [${type}OrderBy!], $first: Int, $after: String, $at: Float) {
  ${field}(where: $where, orderBy: $orderBy, first: $first, after: $after, at: $at) {
    nodes { ${selection} }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface Page {
  readonly rows: Array<Record<string, unknown>>;
  readonly next: string | undefined;
}

async function restPage(entity: string, args: Args, after?: string): Promise<Page> {
  const query: Record<string, string | string[]> = {
    sort: args.sort.map(([field, direction]) => (direction === 'DESC' ? `-${field}` : field)),
    limit: String(args.limit),
  };
  if (args.where) query.where = JSON.stringify(args.where);
  if (args.at !== undefined) query.at = String(args.at);
  if (after !== undefined) query.after = after;
  const response = await f.app.inject({ method: 'GET', url: `/${entity}/api`, query });
  expect(response.statusCode, response.body).toBe(200);
  const next = response.headers['x-next-cursor'];
  return { rows: response.json(), next: typeof next === 'string' ? next : undefined };
}

async function graphPage(entity: 'hen' | 'lay_report', args: Args, after?: string): Promise<Page> {
  const [type, field, selection] =
    entity === 'hen'
      ? ['Hen', 'hensConnection', 'id name coop_id breed status dob']
      : ['LayReport', 'layReportsConnection', 'id hen_id coop_id farm_id eggs quality timestamp'];
  const r = await gql(f.app, '/graphql', connectionQuery(type, field, selection), {
    variables: {
      where: args.where,
      orderBy: args.sort.map(([key, direction]) => ({ [key]: direction })),
      first: args.limit,
      after,
      at: args.at,
    },
  });
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  const connection = r.body.data[field];
  // GraphQL answers every selected field; REST leaves out the ones a row does not have.
  const rows = (connection.nodes as Array<Record<string, unknown>>).map((node) =>
    Object.fromEntries(Object.entries(node).filter(([, v]) => v !== null)),
  );
  return { rows, next: connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : undefined };
}

/**
 * Every page of both, in step: the same rows and the same next cursor each time. Without `where`
 * and `sort` REST answers MeshQL's list (an id as the cursor, given on every full page): the same
 * rows, page by page, each walked with its own cursor.
 */
async function walkBoth(entity: 'hen' | 'lay_report', args: Args): Promise<string[]> {
  const meshql = args.where === undefined && args.sort.length === 0;
  const seen: string[] = [];
  walks += 1;
  let restAfter: string | undefined;
  let graphAfter: string | undefined;
  for (let pages = 0; pages < 40; pages++) {
    const [rest, graph] = await Promise.all([
      restPage(entity, args, restAfter),
      graphPage(entity, args, graphAfter),
    ]);
    expect(rest.rows).toEqual(graph.rows);
    if (meshql) expect(rest.next).toBe(rest.rows.length === args.limit ? rest.rows.at(-1)?.id : undefined);
    else expect(rest.next).toBe(graph.next);
    seen.push(...rest.rows.map((r) => r.id as string));
    if (graph.next === undefined) {
      if (meshql && rest.next !== undefined)
        expect((await restPage(entity, args, rest.next)).rows).toEqual([]);
      rowsSeen += seen.length;
      return seen;
    }
    [restAfter, graphAfter] = [rest.next, graph.next];
  }
  throw new Error('more pages than rows');
}

const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);
const some = <T>(values: readonly T[]) => fc.subarray([...values], { minLength: 1 });
const dates = fc.integer({ min: 1, max: 9 }).map((m) => `2025-0${m}-02`);
const instants = fc
  .integer({ min: 0, max: 8 * 86_400_000 })
  .map((ms) => new Date(Date.UTC(2026, 10, 9) + ms).toISOString());
const range = <T>(value: fc.Arbitrary<T>) =>
  fc.record({ gt: value, gte: value, lt: value, lte: value, eq: value }, { requiredKeys: [] });

const henField = fc.oneof(
  fc.record({
    coop_id: fc.oneof(
      pick(coops).map((eq) => ({ eq: eq.toUpperCase() })),
      some(coops).map((v) => ({ in: v })),
    ),
  }),
  fc.record({
    breed: fc.oneof(
      pick(breeds).map((eq) => ({ eq })),
      some(breeds).map((v) => ({ in: v })),
    ),
  }),
  fc.record({
    status: fc.oneof(
      pick(statuses).map((eq) => ({ eq })),
      some(statuses).map((v) => ({ in: v })),
    ),
  }),
  fc.record({ dob: range(dates) }),
  fc.record({ id: some(hens.map((h) => h.id)).map((v) => ({ in: v })) }),
);
const reportField = fc.oneof(
  fc.record({ coop_id: pick(coops).map((eq) => ({ eq })) }),
  fc.record({ hen_id: some(hens.slice(0, 5).map((h) => h.id)).map((v) => ({ in: v })) }),
  fc.record({ quality: some(['grade_a', 'grade_b', 'cracked']).map((v) => ({ in: v })) }),
  fc.record({ eggs: range(fc.integer({ min: -1, max: 4 })) }),
  fc.record({ timestamp: range(instants) }),
);
/** One level of fields, and `and`/`or`/`not` of such levels (GraphQL's two levels). */
const whereOf = (field: fc.Arbitrary<Where>): fc.Arbitrary<Where> => {
  const level = fc.array(field, { maxLength: 2 }).map((parts) => Object.assign({}, ...parts) as Where);
  return fc.oneof(
    level,
    fc.record(
      {
        and: fc.array(level, { maxLength: 2 }),
        or: fc.array(level, { minLength: 1, maxLength: 3 }),
        not: level,
      },
      { requiredKeys: [] },
    ),
  );
};
const argsOf = (field: fc.Arbitrary<Where>, sortable: readonly string[]) =>
  fc.record(
    {
      where: whereOf(field),
      sort: fc.uniqueArray(fc.tuple(pick(sortable), pick(['ASC', 'DESC'] as const)), {
        maxLength: 3,
        selector: ([key]) => key,
      }),
      limit: fc.integer({ min: 1, max: 6 }),
      at: fc.constantFrom(undefined, 'between'),
    },
    { requiredKeys: ['sort', 'limit'] },
  );
const resolveAt = (args: { at?: number | 'between' | undefined }) =>
  args.at === 'between' ? { ...args, at: between } : { ...args, at: undefined };

it('REST pages equal the GraphQL connection pages for the same filter, sort and cursor (hens)', async () => {
  await fc.assert(
    fc.asyncProperty(argsOf(henField, ['id', 'coop_id', 'breed', 'status', 'dob']), async (args) => {
      await walkBoth('hen', resolveAt(args) as Args);
    }),
    { numRuns: 40, seed: 43 },
  );
  expect(rowsSeen).toBeGreaterThan(walks * 2);
});

it('REST pages equal the GraphQL connection pages (lay reports: numbers and timestamps)', async () => {
  await fc.assert(
    fc.asyncProperty(argsOf(reportField, ['id', 'hen_id', 'quality', 'eggs', 'timestamp']), async (args) => {
      await walkBoth('lay_report', resolveAt(args) as Args);
    }),
    { numRuns: 40, seed: 43 },
  );
});

it('a filter and a sort answer the rows they name, walked with x-next-cursor', async () => {
  const ids = await walkBoth('hen', {
    where: { coop_id: { eq: coops[0]!.toUpperCase() }, not: { status: { eq: 'retired' } } },
    sort: [['dob', 'DESC']],
    limit: 2,
  });
  const want = hens
    .slice(2)
    .concat(hens[0]!)
    .filter((h) => h.payload.coop_id === coops[0] && h.id !== hens[1]!.id)
    .map((h) => (h.id === hens[0]!.id ? { ...h, payload: { ...h.payload, status: 'deceased' } } : h))
    .filter((h) => h.payload.status !== 'retired')
    .sort((a, b) => {
      const [x, y] = [a.payload.dob ?? null, b.payload.dob ?? null];
      // Descending: rows without a dob last; id ascending breaks ties.
      if (x !== y) return x === null ? 1 : y === null ? -1 : x < y ? 1 : -1;
      return a.id < b.id ? -1 : 1;
    })
    .map((h) => h.id);
  expect(want.length).toBeGreaterThan(2);
  expect(ids).toEqual(want);
});

it('without where and sort the list answers as before: id order, the last id as the cursor', async () => {
  const response = await f.app.inject({ method: 'GET', url: '/hen/api?limit=3' });
  expect(response.statusCode).toBe(200);
  const rows = response.json() as Array<{ id: string }>;
  expect(rows.map((r) => r.id)).toEqual([hens[0]!.id, hens[2]!.id, hens[3]!.id]);
  expect(response.headers['x-next-cursor']).toBe(hens[3]!.id);
});

it('a bad value is 400 EGGMESH_BAD_QUERY naming its parameter', async () => {
  const cursor = (await restPage('hen', { sort: [['dob', 'ASC']], limit: 1 })).next!;
  const cases: Array<[Record<string, string | string[]>, string]> = [
    [{ where: '{"breed":' }, 'where must be a JSON object'],
    [{ where: '{"name":{"eq":"hen 1"}}' }, 'where: unknown name'],
    [{ where: '{"coop_id":{"eq":"C0"}}' }, 'where.coop_id.eq'],
    [{ where: '{"breed":{"gt":"a"}}' }, 'where.breed: unknown gt'],
    [{ where: '{"dob":{"eq":null}}' }, 'where.dob.eq'],
    [{ where: '{"or":[{"and":[]}]}' }, 'where.or.0: unknown and'],
    [{ sort: 'name' }, 'sort cannot be "name"'],
    [{ sort: 'dob,-breed' }, 'sort cannot be "dob,-breed"'],
    [{ sort: '-dob', after: cursor }, 'after is a cursor of another order'],
    [{ sort: 'dob', after: 'not-a-cursor' }, 'after'],
    [{ sort: 'dob', limit: '51' }, 'limit must be an integer from 1 to 50'],
  ];
  for (const [query, message] of cases) {
    const response = await f.app.inject({ method: 'GET', url: '/hen/api', query });
    expect(response.statusCode, JSON.stringify(query)).toBe(400);
    expect(response.json().code).toBe('EGGMESH_BAD_QUERY');
    expect(response.json().error, JSON.stringify(query)).toContain(message);
  }
  // The cursor works with the query it came from.
  const next = await f.app.inject({
    method: 'GET',
    url: '/hen/api',
    query: { sort: 'dob', limit: '1', after: cursor },
  });
  expect(next.statusCode).toBe(200);
});
