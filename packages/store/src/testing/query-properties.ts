import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { expect } from 'vitest';
import { isStoreError, storeErrorCodes } from '../errors.js';
import {
  type AggregateOptions,
  aggregateInMemory,
  type OrderBy,
  planAggregate,
  planQuery,
  type QueryOptions,
  queryInMemory,
  type Where,
} from '../query.js';
import type { ReadStore } from '../read-store.js';
import type { PrimaryStore, StoredRecord, WriteOperation } from '../types.js';

const COOPS = [randomUUID(), randomUUID()];
const BREEDS = ['leghorn', 'silkie', 'orpington'];
const STATUSES = ['active', 'retired', 'deceased'];
const DATES = ['2025-01-05', '2025-03-10', '2025-03-11', '2025-07-01'];
const QUALITIES = ['grade_a', 'grade_b', 'cracked'];
const T0 = Date.UTC(2026, 10, 16, 22);

const henArb = fc.record(
  {
    coop_id: fc.constantFrom(...COOPS),
    breed: fc.constantFrom(...BREEDS),
    status: fc.constantFrom(...STATUSES),
    dob: fc.constantFrom(...DATES),
  },
  { requiredKeys: ['coop_id', 'breed'] },
);

/** A timestamp within three days, written with one of three offsets (text order is not time order). */
const timestampArb = fc
  .tuple(fc.integer({ min: 0, max: 3 * 24 * 60 }), fc.constantFrom(-2, 0, 1))
  .map(([minutes, offset]) => {
    const local = new Date(T0 + minutes * 60_000 + offset * 3_600_000).toISOString().slice(0, 19);
    return `${local}${offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}0${Math.abs(offset)}:00`}`;
  });

const reportArb = fc.record(
  {
    hen_id: fc.constant(COOPS[0] as string),
    coop_id: fc.constantFrom(...COOPS),
    farm_id: fc.constantFrom(...COOPS),
    eggs: fc.integer({ min: 0, max: 9 }),
    timestamp: timestampArb,
    quality: fc.constantFrom(...QUALITIES),
  },
  { requiredKeys: ['hen_id', 'coop_id', 'farm_id', 'eggs', 'timestamp'] },
);

const henLeaf: fc.Arbitrary<Where> = fc.oneof(
  fc.record({ coop_id: fc.record({ eq: fc.constantFrom(...COOPS) }) }),
  fc.record({
    breed: fc.oneof(fc.record({ eq: fc.constantFrom(...BREEDS) }), fc.record({ in: fc.subarray(BREEDS) })),
  }),
  fc.record({
    status: fc.oneof(
      fc.record({ eq: fc.constantFrom(...STATUSES) }),
      fc.record({ in: fc.subarray(STATUSES) }),
    ),
  }),
  fc.record({
    dob: fc.record(
      {
        eq: fc.constantFrom(...DATES),
        gt: fc.constantFrom(...DATES),
        gte: fc.constantFrom(...DATES),
        lt: fc.constantFrom(...DATES),
        lte: fc.constantFrom(...DATES),
      },
      { requiredKeys: [] },
    ),
  }),
);

const whereArb: fc.Arbitrary<Where> = fc.letrec<{ where: Where }>((tie) => ({
  where: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    henLeaf,
    fc.record({ and: fc.array(tie('where'), { maxLength: 3 }) }),
    fc.record({ or: fc.array(tie('where'), { maxLength: 3 }) }),
    fc.record({ not: tie('where') }),
  ),
})).where;

const orderArb: fc.Arbitrary<OrderBy[]> = fc
  .subarray(['breed', 'status', 'dob', 'coop_id'])
  .chain((fields) =>
    fc.tuple(
      ...fields.map((field) =>
        fc.constantFrom('ASC' as const, 'DESC' as const).map((direction) => ({ field, direction })),
      ),
    ),
  );

/** Asserts that `work` fails with STORE_INVALID_QUERY and a message matching `refusal`. */
export async function expectRefused(work: Promise<unknown>, refusal: RegExp): Promise<void> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isStoreError(error, storeErrorCodes.INVALID_QUERY), String(error)).toBe(true);
  expect((error as Error).message).toMatch(refusal);
}

/** Every live row of an entity through `list` (the reference rows). */
async function allRows(read: ReadStore, entity: 'hen' | 'lay_report', at?: number): Promise<StoredRecord[]> {
  const rows: StoredRecord[] = [];
  for (;;) {
    const page = await read.list(entity, { limit: 100, after: rows.at(-1)?.id, at });
    rows.push(...page);
    if (page.length < 100) return rows;
  }
}

/**
 * Writes random hens and lay reports in two steps (creates, then updates and deletes a time later),
 * and checks with fast-check that random filters, orders, pages (walked with cursors) and aggregates,
 * now and at the time of the first step, equal the same computation over all rows in memory.
 */
export async function checkQueryProperties(
  read: ReadStore,
  primary: PrimaryStore,
  setTime: (ms: number) => void,
  settle: (position: number) => Promise<void>,
  seed: number,
  /** Set on a server that refuses past times and aggregates (`ReadStoreFixture.limitedServer`). */
  refusal?: RegExp,
): Promise<void> {
  const [hens, reports, changes] = fc.sample(
    fc.tuple(
      fc.array(henArb, { minLength: 5, maxLength: 25 }),
      fc.array(reportArb, { minLength: 5, maxLength: 40 }),
      fc.array(fc.tuple(fc.nat(), fc.boolean(), henArb), { maxLength: 8 }),
    ),
    { numRuns: 1, seed },
  )[0] as [
    Record<string, unknown>[],
    Record<string, unknown>[],
    Array<[number, boolean, Record<string, unknown>]>,
  ];
  const past = 5_000_000;
  setTime(past);
  const ids = hens.map(() => randomUUID());
  await primary.commit([
    ...hens.map(
      (payload, i): WriteOperation => ({
        op: 'create',
        entity: 'hen',
        id: ids[i] as string,
        payload: { name: `h${i}`, ...payload },
      }),
    ),
    ...reports.map(
      (payload): WriteOperation => ({ op: 'create', entity: 'lay_report', id: randomUUID(), payload }),
    ),
  ]);
  setTime(past + 1000);
  const touched = new Set<string>();
  const later: WriteOperation[] = [];
  for (const [n, remove, payload] of changes) {
    const id = ids[n % ids.length] as string;
    if (touched.has(id)) continue;
    touched.add(id);
    later.push(
      remove
        ? { op: 'delete', entity: 'hen', id }
        : { op: 'update', entity: 'hen', id, payload: { name: 'u', ...payload } },
    );
  }
  const { position } = await primary.commit(
    later.length
      ? later
      : [
          {
            op: 'create',
            entity: 'hen',
            id: randomUUID(),
            payload: { name: 'x', coop_id: COOPS[0], breed: 'silkie' },
          },
        ],
  );
  await settle(position);
  const rows = { now: await allRows(read, 'hen'), past: await allRows(read, 'hen', past) };
  const reportRows = await allRows(read, 'lay_report');

  await fc.assert(
    fc.asyncProperty(
      fc.option(whereArb, { nil: undefined }),
      orderArb,
      fc.integer({ min: 0, max: 7 }),
      fc.boolean(),
      async (where, orderBy, first, inPast) => {
        const options: QueryOptions = { where, orderBy, first, at: inPast ? past : undefined };
        const reference = inPast ? rows.past : rows.now;
        if (refusal && inPast) {
          await expectRefused(read.query('hen', options), refusal);
          return;
        }
        const got = await read.query('hen', options);
        const want = queryInMemory(reference, planQuery('hen', options));
        expect(got.records.map((r) => r.id)).toEqual(want.records.map((r) => r.id));
        expect(got.totalCount).toBe(want.totalCount);
        expect(got.hasNextPage).toBe(want.hasNextPage);
        // Walking every page with cursors gives every matching row once, in order.
        if (first === 0) return;
        const all = queryInMemory(reference, planQuery('hen', { ...options, first: 1000 }));
        const walked: string[] = [];
        let page = got;
        for (;;) {
          walked.push(...page.records.map((r) => r.id));
          if (!page.hasNextPage) break;
          page = await read.query('hen', { ...options, after: page.cursors.at(-1) });
        }
        expect(walked).toEqual(all.records.map((r) => r.id));
      },
    ),
    { seed, numRuns: 40 },
  );

  await fc.assert(
    fc.asyncProperty(
      fc.subarray(['farm_id', 'quality', 'coop_id']),
      fc.option(fc.constantFrom('hour' as const, 'day' as const, 'week' as const), { nil: undefined }),
      fc.option(fc.tuple(timestampArb, timestampArb), { nil: undefined }),
      async (groupBy, unit, range) => {
        const options: AggregateOptions = {
          groupBy,
          bucket: unit ? { field: 'timestamp', unit } : undefined,
          where: range ? { timestamp: { gte: range[0], lt: range[1] } } : undefined,
          fields: ['eggs'],
          maxGroups: 1000,
        };
        if (refusal) {
          await expectRefused(read.aggregate('lay_report', options), refusal);
          return;
        }
        const got = await read.aggregate('lay_report', options);
        const want = aggregateInMemory(reportRows, planAggregate('lay_report', options));
        expect(got.map((g) => [g.keys, g.bucket, g.count, g.sum, g.min, g.max])).toEqual(
          want.map((g) => [g.keys, g.bucket, g.count, g.sum, g.min, g.max]),
        );
        got.forEach((g, i) => {
          const avg = want[i]?.avg.eggs;
          if (avg === null || avg === undefined) expect(g.avg.eggs).toBeNull();
          else expect(g.avg.eggs).toBeCloseTo(avg, 9);
        });
      },
    ),
    { seed, numRuns: 30 },
  );
}
