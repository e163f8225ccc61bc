import { randomUUID } from 'node:crypto';
import type { EntityName } from '@eggmesh/schema';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isStoreError, storeErrorCodes } from '../errors.js';
import type { ProjectionStore } from '../projection-store.js';
import {
  type AggregateGroup,
  type AggregateOptions,
  aggregateInMemory,
  type Condition,
  fieldKind,
  planAggregate,
  planQuery,
  type QueryOptions,
  queryInMemory,
} from '../query.js';
import type { ReadStore } from '../read-store.js';
import type { PrimaryStore, StoredRecord } from '../types.js';
import { checkQueryProperties, expectRefused } from './query-properties.js';

/** A read store over fresh, empty storage, with the writers that fill it. */
export interface ReadStoreFixture {
  readonly read: ReadStore;
  /** Writes actors and events (the replica the read store reads follows it). */
  readonly primary: PrimaryStore;
  /** Writes projections (at checkpoint 0 when opened). */
  readonly projections: ProjectionStore;
  /** Sets the clock the primary stamps versions with (epoch ms). */
  setTime(ms: number): void;
  /** Releases the fixture; the suite closes `read`, `primary` and `projections` itself. */
  dispose?(): Promise<void>;
  /**
   * Set when the server lacks what a query at a past time, an order or range on a timestamp and an
   * aggregate need (FerretDB 1.x and its missing aggregation expressions): the suite asserts that those
   * are refused (STORE_INVALID_QUERY with a message matching `refusal`) and that every other query is
   * answered exactly. Unset: every query and aggregate is answered exactly.
   */
  readonly limitedServer?: { readonly refusal: RegExp };
}

/** The fields a planned condition compares. */
function conditionFields(where: Condition): string[] {
  switch (where.op) {
    case 'and':
    case 'or':
      return where.of.flatMap(conditionFields);
    case 'not':
      return conditionFields(where.of);
    default:
      return [where.field];
  }
}

/** True when a query needs what a limited server lacks: a past time, a timestamp in its filter or order. */
export function needsAggregationExpressions(entity: EntityName, options: QueryOptions): boolean {
  const plan = planQuery(entity, options);
  return (
    plan.at !== undefined ||
    [...conditionFields(plan.where), ...plan.sort.map((k) => k.field)].some(
      (field) => field !== 'id' && fieldKind(entity, field) === 'timestamp',
    )
  );
}

export interface ReadStoreHarness {
  open(): Promise<ReadStoreFixture>;
}

const SETTLE_MS = 10_000;

/** Waits on `changed()` until `done` holds (a replica may lag the primary). */
async function eventually(read: ReadStore, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  while (!(await done())) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`the read store did not catch up within ${SETTLE_MS} ms`);
    await read.changed(Math.min(left, 200));
  }
}

const farm = (name: string, zone = 'north') => ({ name, farm_type: 'homestead', zone });

/** The behaviour every ReadStore adapter must show. Call inside a test file of the adapter. */
export function runReadStoreContract(name: string, harness: ReadStoreHarness): void {
  describe(`ReadStore contract: ${name}`, () => {
    let f: ReadStoreFixture;
    let now = 1_000_000;

    beforeEach(async () => {
      now = 1_000_000;
      f = await harness.open();
      f.setTime(now);
    });
    afterEach(async () => {
      await f.read.close();
      await f.projections.close();
      await f.primary.close();
      await f.dispose?.();
    });

    it('starts at positions 0 and answers ping', async () => {
      await f.read.ping();
      expect(await f.read.replicaPosition()).toBe(0);
      expect(await f.read.projectionPosition()).toBe(0);
      expect(await f.read.get('farm', randomUUID())).toBeNull();
    });

    it('reaches the primary position and reads entities now and at a time', async () => {
      const id = randomUUID();
      await f.primary.commit([{ op: 'create', entity: 'farm', id, payload: farm('v1') }]);
      const t1 = now;
      now += 10;
      f.setTime(now);
      const { position } = await f.primary.commit([
        { op: 'update', entity: 'farm', id, payload: farm('v2', 'south') },
      ]);
      await eventually(f.read, async () => (await f.read.replicaPosition()) >= position);
      expect(await f.read.replicaPosition()).toBe(position);
      expect((await f.read.get('farm', id))?.payload.name).toBe('v2');
      expect((await f.read.get('farm', id, { at: t1 }))?.payload.name).toBe('v1');
      expect(await f.read.get('farm', id, { at: t1 - 1 })).toBeNull();
      expect((await f.read.findBy('farm', 'zone', 'north', { limit: 10, at: t1 })).map((r) => r.id)).toEqual([
        id,
      ]);
      expect(await f.read.findBy('farm', 'zone', 'north', { limit: 10 })).toEqual([]);
      expect((await f.read.list('farm', { limit: 10 })).map((r) => r.id)).toEqual([id]);
      expect((await f.read.getMany('farm', [id, randomUUID()])).map((r) => r.id)).toEqual([id]);
    });

    it('reads projections at the projection position, now and at a time; a tombstone is hidden', async () => {
      const farmId = randomUUID();
      const out = (total_hens: number, createdAt: number, live = true) => ({
        entity: 'farm_output' as const,
        id: farmId,
        payload: { farm_id: farmId, farm_type: 'homestead', total_hens },
        live,
        createdAt,
      });
      await f.projections.commit({
        expectedCheckpoint: 0,
        checkpoint: 3,
        documents: [out(1, 100)],
        state: [],
      });
      await f.projections.commit({
        expectedCheckpoint: 3,
        checkpoint: 4,
        documents: [out(2, 200)],
        state: [],
      });
      await eventually(f.read, async () => (await f.read.projectionPosition()) >= 4);
      expect(await f.read.projectionPosition()).toBe(4);
      expect((await f.read.get('farm_output', farmId))?.payload.total_hens).toBe(2);
      expect((await f.read.get('farm_output', farmId, { at: 150 }))?.payload.total_hens).toBe(1);
      expect(await f.read.get('farm_output', farmId, { at: 99 })).toBeNull();
      expect((await f.read.findBy('farm_output', 'farm_id', farmId, { limit: 5 })).map((r) => r.id)).toEqual([
        farmId,
      ]);
      await f.projections.commit({
        expectedCheckpoint: 4,
        checkpoint: 5,
        documents: [out(2, 300, false)],
        state: [],
      });
      await eventually(f.read, async () => (await f.read.projectionPosition()) >= 5);
      expect(await f.read.get('farm_output', farmId)).toBeNull();
      expect((await f.read.get('farm_output', farmId, { at: 250 }))?.payload.total_hens).toBe(2);
    });

    it('answers the projection changes of each commit in (after, through], in commit order', async () => {
      const [a, b] = [randomUUID(), randomUUID()].sort();
      const out = (id: string, total_hens: number, createdAt: number, live = true) => ({
        entity: 'farm_output' as const,
        id,
        payload: { farm_id: id, farm_type: 'homestead', total_hens },
        live,
        createdAt,
      });
      const hen = randomUUID();
      await f.projections.commit({
        expectedCheckpoint: 0,
        checkpoint: 2,
        // Two versions of `a` in one commit: the commit's change is its newest.
        documents: [out(a as string, 1, 100), out(a as string, 2, 110), out(b as string, 5, 100)],
        state: [],
      });
      await f.projections.commit({
        expectedCheckpoint: 2,
        checkpoint: 7,
        documents: [
          out(b as string, 6, 200, false),
          { entity: 'hen_productivity', id: hen, payload: { hen_id: hen }, live: true, createdAt: 200 },
        ],
        state: [],
      });
      await eventually(f.read, async () => (await f.read.projectionPosition()) >= 7);
      const all = await f.read.projectionChanges(0, 7);
      expect(all.map((c) => [c.position, c.entity, c.id, c.live, c.payload.total_hens])).toEqual([
        [2, 'farm_output', a, true, 2],
        [2, 'farm_output', b, true, 5],
        [7, 'farm_output', b, false, 6],
        [7, 'hen_productivity', hen, true, undefined],
      ]);
      expect((await f.read.projectionChanges(2, 7)).map((c) => c.position)).toEqual([7, 7]);
      expect((await f.read.projectionChanges(0, 6)).map((c) => c.position)).toEqual([2, 2]);
      expect(await f.read.projectionChanges(7, 7)).toEqual([]);
    });

    /** Every live row of an entity now or at a time, through `list` (the reference rows). */
    const allRows = async (entity: 'hen' | 'lay_report' | 'farm_output', at?: number) => {
      const rows: StoredRecord[] = [];
      for (;;) {
        const page = await f.read.list(entity, { limit: 100, after: rows.at(-1)?.id, at });
        rows.push(...page);
        if (page.length < 100) return rows;
      }
    };
    /** The query's answer, and the same query over every row in memory. */
    const both = async (entity: 'hen' | 'lay_report' | 'farm_output', options: QueryOptions) => {
      const got = await f.read.query(entity, options);
      const want = queryInMemory(await allRows(entity, options.at), planQuery(entity, options));
      return { got, want };
    };
    const coops = [randomUUID(), randomUUID()];
    const hen = (i: number) => ({
      name: `hen ${i}`,
      coop_id: coops[i % 2],
      breed: ['leghorn', 'silkie', 'orpington'][i % 3],
      ...(i % 4 === 0 ? {} : { status: i % 4 === 1 ? 'active' : 'retired' }),
      ...(i % 5 === 0 ? {} : { dob: `2025-0${1 + (i % 9)}-1${i % 10}` }),
    });
    /** Lay reports with timestamps written in different offsets, so text order differs from time order. */
    const report = (i: number) => {
      const instant = Date.UTC(2026, 10, 20, 0, 0, 0) + i * 37 * 60_000;
      const offset = (i % 3) - 1;
      const local = new Date(instant + offset * 3_600_000).toISOString().slice(0, 19);
      const suffix = offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}0${Math.abs(offset)}:00`;
      return {
        hen_id: randomUUID(),
        coop_id: coops[i % 2],
        farm_id: coops[(i + 1) % 2],
        eggs: (i * 7) % 5,
        timestamp: `${local}${suffix}`,
        ...(i % 3 === 0 ? {} : { quality: i % 3 === 1 ? 'grade_a' : 'cracked' }),
      };
    };
    const seed = async (
      n: number,
      entity: 'hen' | 'lay_report',
      payload: (i: number) => Record<string, unknown>,
    ) => {
      const { position } = await f.primary.commit(
        Array.from({ length: n }, (_, i) => ({
          op: 'create' as const,
          entity,
          id: randomUUID(),
          payload: payload(i),
        })),
      );
      await eventually(f.read, async () => (await f.read.replicaPosition()) >= position);
    };

    it('query: filters, sorts and counts as the same query over all rows in memory', async () => {
      await seed(24, 'hen', hen);
      await seed(30, 'lay_report', report);
      const cases: Array<['hen' | 'lay_report', QueryOptions]> = [
        ['hen', { first: 100 }],
        ['hen', { first: 5, where: { breed: { eq: 'silkie' }, coop_id: { eq: coops[0] } } }],
        [
          'hen',
          {
            first: 50,
            where: { status: { in: ['active', 'retired'] } },
            orderBy: [{ field: 'dob', direction: 'DESC' }],
          },
        ],
        [
          'hen',
          {
            first: 50,
            where: { not: { status: { eq: 'active' } } },
            orderBy: [{ field: 'status', direction: 'ASC' }],
          },
        ],
        [
          'hen',
          {
            first: 50,
            where: { or: [{ breed: { eq: 'leghorn' } }, { dob: { gte: '2025-05-01', lt: '2025-08-01' } }] },
          },
        ],
        [
          'hen',
          {
            first: 50,
            where: { and: [] },
            orderBy: [
              { field: 'breed', direction: 'DESC' },
              { field: 'dob', direction: 'ASC' },
            ],
          },
        ],
        ['hen', { first: 50, where: { or: [] } }],
        ['hen', { first: 50, where: { breed: { in: [] } } }],
        ['lay_report', { first: 50, orderBy: [{ field: 'timestamp', direction: 'ASC' }] }],
        [
          'lay_report',
          {
            first: 7,
            where: { timestamp: { gte: '2026-11-20T05:00:00+02:00', lt: '2026-11-20T12:00:00Z' } },
            orderBy: [{ field: 'timestamp', direction: 'DESC' }],
          },
        ],
        [
          'lay_report',
          {
            first: 50,
            where: { eggs: { gt: 1, lte: 3 }, not: { quality: { eq: 'cracked' } } },
            orderBy: [{ field: 'eggs', direction: 'DESC' }],
          },
        ],
        ['lay_report', { first: 0, where: { farm_id: { eq: coops[1] } } }],
      ];
      for (const [entity, options] of cases) {
        const limited = f.limitedServer;
        if (limited && needsAggregationExpressions(entity, options)) {
          await expectRefused(f.read.query(entity, options), limited.refusal);
          continue;
        }
        const { got, want } = await both(entity, options);
        expect(
          got.records.map((r) => r.id),
          JSON.stringify(options),
        ).toEqual(want.records.map((r) => r.id));
        expect(got.totalCount, JSON.stringify(options)).toBe(want.totalCount);
        expect(got.hasNextPage, JSON.stringify(options)).toBe(want.hasNextPage);
        expect(got.cursors).toEqual(want.cursors);
      }
      // Without a count: the same page, no total.
      const uncounted = await f.read.query('hen', {
        first: 3,
        where: { breed: { eq: 'silkie' } },
        count: false,
      });
      const counted = await f.read.query('hen', { first: 3, where: { breed: { eq: 'silkie' } } });
      expect(uncounted.totalCount).toBeUndefined();
      expect(uncounted.records).toEqual(counted.records);
      expect(uncounted.hasNextPage).toBe(counted.hasNextPage);
      // A missing field never equals, and `not` of a comparison holds for it.
      const noStatus = await f.read.query('hen', {
        first: 100,
        where: { not: { status: { in: ['active', 'retired'] } } },
      });
      expect(noStatus.totalCount).toBe(6);
      expect(noStatus.records.every((r) => r.payload.status === undefined)).toBe(true);
    });

    it('query: cursor pages stay exact while rows are written between pages', async () => {
      await seed(20, 'hen', hen);
      const options = { first: 4, orderBy: [{ field: 'dob', direction: 'ASC' as const }] };
      const before = await allRows('hen');
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; ; page++) {
        const got = await f.read.query('hen', { ...options, after });
        seen.push(...got.records.map((r) => r.id));
        if (!got.hasNextPage) break;
        after = got.cursors.at(-1);
        // A write between pages: a new hen (sorts anywhere) and a deletion of one already seen.
        now += 1;
        f.setTime(now);
        const { position } = await f.primary.commit([
          { op: 'create', entity: 'hen', id: randomUUID(), payload: hen(page + 100) },
          { op: 'delete', entity: 'hen', id: seen[page] as string },
        ]);
        await eventually(f.read, async () => (await f.read.replicaPosition()) >= position);
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const r of before) expect(seen).toContain(r.id);
    });

    it('query: at a time in the past answers from the versions then', async () => {
      await seed(12, 'hen', hen);
      const past = now;
      const pastRows = await allRows('hen');
      now += 100;
      f.setTime(now);
      const { position } = await f.primary.commit([
        ...pastRows.slice(0, 4).map((r) => ({ op: 'delete' as const, entity: 'hen' as const, id: r.id })),
        ...pastRows.slice(4, 8).map((r) => ({
          op: 'update' as const,
          entity: 'hen' as const,
          id: r.id,
          payload: { ...r.payload, breed: 'silkie', status: 'deceased' },
        })),
      ]);
      await eventually(f.read, async () => (await f.read.replicaPosition()) >= position);
      for (const where of [{}, { breed: { eq: 'silkie' } }, { status: { eq: 'deceased' } }]) {
        const options = {
          first: 3,
          where,
          orderBy: [{ field: 'breed', direction: 'ASC' as const }],
          at: past,
        };
        if (f.limitedServer) {
          await expectRefused(f.read.query('hen', options), f.limitedServer.refusal);
          continue;
        }
        const { got, want } = await both('hen', options);
        expect(got.records.map((r) => r.id)).toEqual(want.records.map((r) => r.id));
        expect(got.totalCount).toBe(want.totalCount);
        const next = await f.read.query('hen', { ...options, after: got.cursors.at(-1) });
        const wantNext = queryInMemory(pastRows, planQuery('hen', { ...options, after: got.cursors.at(-1) }));
        expect(next.records.map((r) => r.id)).toEqual(wantNext.records.map((r) => r.id));
      }
      if (!f.limitedServer) {
        expect(
          (await f.read.query('hen', { first: 1, where: { status: { eq: 'deceased' } }, at: past }))
            .totalCount,
        ).toBe(0);
      }
      expect(
        (await f.read.query('hen', { first: 1, where: { status: { eq: 'deceased' } } })).totalCount,
      ).toBe(4);
    });

    it('query: projections are queried like entities', async () => {
      const docs = Array.from({ length: 6 }, (_, i) => {
        const id = randomUUID();
        return {
          entity: 'farm_output' as const,
          id,
          payload: {
            farm_id: id,
            farm_type: i % 2 ? 'megafarm' : 'homestead',
            active_hens: i * 3,
            total_hens: 10 - i,
          },
          live: true,
          createdAt: 100,
        };
      });
      await f.projections.commit({ expectedCheckpoint: 0, checkpoint: 1, documents: docs, state: [] });
      await eventually(f.read, async () => (await f.read.projectionPosition()) >= 1);
      const { got, want } = await both('farm_output', {
        first: 2,
        where: { active_hens: { gte: 3 } },
        orderBy: [{ field: 'total_hens', direction: 'ASC' }],
      });
      expect(got.records.map((r) => r.id)).toEqual(want.records.map((r) => r.id));
      expect(got.totalCount).toBe(5);
    });

    it('query: an unknown field, a range on text or a foreign cursor is INVALID_QUERY', async () => {
      const invalid = async (options: QueryOptions) => {
        const error = await f.read.query('hen', options).then(
          () => null,
          (e: unknown) => e,
        );
        expect(isStoreError(error, storeErrorCodes.INVALID_QUERY), JSON.stringify(options)).toBe(true);
      };
      await invalid({ first: 1, where: { name: { eq: 'x' } } });
      await invalid({ first: 1, where: { breed: { gt: 'a' } } });
      await invalid({ first: 1, orderBy: [{ field: 'nope', direction: 'ASC' }] });
      await invalid({ first: 1, after: 'not-a-cursor' });
      // The page size is the caller's to bound (EGGMESH_LIST_MAX_LIMIT); the store takes any whole number.
      await invalid({ first: -1 });
      await invalid({ first: 1.5 });
      await seed(2, 'hen', hen);
      const page = await f.read.query('hen', { first: 1 });
      await invalid({ first: 1, after: page.cursors[0], orderBy: [{ field: 'breed', direction: 'ASC' }] });
    });

    it('aggregate: counts, sums, min, max and avg per group and time bucket as over all rows in memory', async () => {
      await seed(40, 'lay_report', report);
      const close = (got: AggregateGroup[], want: AggregateGroup[], label: string) => {
        expect(
          got.map((g) => [g.keys, g.bucket, g.count, g.sum, g.min, g.max]),
          label,
        ).toEqual(want.map((g) => [g.keys, g.bucket, g.count, g.sum, g.min, g.max]));
        got.forEach((g, i) => {
          for (const [field, avg] of Object.entries(want[i]?.avg ?? {})) {
            if (avg === null) expect(g.avg[field]).toBeNull();
            else expect(g.avg[field], label).toBeCloseTo(avg, 9);
          }
        });
      };
      const cases: AggregateOptions[] = [
        { maxGroups: 100, fields: ['eggs'] },
        {
          maxGroups: 100,
          fields: ['eggs'],
          groupBy: ['farm_id'],
          bucket: { field: 'timestamp', unit: 'day' },
        },
        {
          maxGroups: 100,
          fields: ['eggs'],
          groupBy: ['quality'],
          bucket: { field: 'timestamp', unit: 'hour' },
        },
        {
          maxGroups: 100,
          fields: ['eggs'],
          groupBy: ['coop_id', 'quality'],
          bucket: { field: 'timestamp', unit: 'week' },
          where: { timestamp: { gte: '2026-11-20T03:00:00+01:00', lt: '2026-11-20T20:00:00Z' } },
        },
        { maxGroups: 100, fields: ['eggs'], where: { eggs: { gt: 100 } } },
      ];
      const rows = await allRows('lay_report');
      for (const options of cases) {
        if (f.limitedServer) {
          await expectRefused(f.read.aggregate('lay_report', options), f.limitedServer.refusal);
          continue;
        }
        const got = await f.read.aggregate('lay_report', options);
        close(got, aggregateInMemory(rows, planAggregate('lay_report', options)), JSON.stringify(options));
      }
      // More groups than allowed, or an aggregate over something that is not an event, is refused.
      const refused = async (entity: 'lay_report' | 'hen', options: AggregateOptions) =>
        expect(
          isStoreError(
            await f.read.aggregate(entity, options).then(
              () => null,
              (e: unknown) => e,
            ),
            storeErrorCodes.INVALID_QUERY,
          ),
        ).toBe(true);
      await refused('lay_report', { maxGroups: 2, groupBy: ['quality'] });
      await refused('lay_report', { maxGroups: 10, groupBy: ['eggs'] });
      await refused('hen', { maxGroups: 10 });
    });

    it('aggregate: at a time in the past counts the versions live then', async () => {
      await seed(10, 'lay_report', report);
      const past = now;
      const pastRows = await allRows('lay_report');
      now += 100;
      f.setTime(now);
      const { position } = await f.primary.commit([
        ...pastRows
          .slice(0, 3)
          .map((r) => ({ op: 'delete' as const, entity: 'lay_report' as const, id: r.id })),
        ...pastRows.slice(3, 5).map((r) => ({
          op: 'update' as const,
          entity: 'lay_report' as const,
          id: r.id,
          payload: { ...r.payload, eggs: 4 },
        })),
      ]);
      await eventually(f.read, async () => (await f.read.replicaPosition()) >= position);
      const options: AggregateOptions = { maxGroups: 50, fields: ['eggs'], groupBy: ['farm_id'], at: past };
      if (f.limitedServer) {
        await expectRefused(f.read.aggregate('lay_report', options), f.limitedServer.refusal);
        await expectRefused(
          f.read.aggregate('lay_report', { ...options, at: undefined }),
          f.limitedServer.refusal,
        );
        return;
      }
      const got = await f.read.aggregate('lay_report', options);
      const want = aggregateInMemory(pastRows, planAggregate('lay_report', options));
      expect(got.map((g) => [g.keys, g.count, g.sum])).toEqual(want.map((g) => [g.keys, g.count, g.sum]));
      const nowGroups = await f.read.aggregate('lay_report', { ...options, at: undefined });
      expect(nowGroups.reduce((n, g) => n + g.count, 0)).toBe(7);
    });

    it('query and aggregate: random filters, orders, pages and groups equal the computation in memory, now and at a past time (fast-check)', async () => {
      // A fixed seed: a failure names its counterexample and replays the same way.
      const seed = 43;
      await checkQueryProperties(
        f.read,
        f.primary,
        (ms) => f.setTime(ms),
        (position) => eventually(f.read, async () => (await f.read.replicaPosition()) >= position),
        seed,
        f.limitedServer?.refusal,
      );
    }, 120_000);

    it('changed() resolves when a write lands, long before its timeout', async () => {
      await f.read.replicaPosition();
      const woken = f.read.changed(60_000);
      await f.primary.commit([{ op: 'create', entity: 'farm', id: randomUUID(), payload: farm('x') }]);
      await woken;
      await eventually(f.read, async () => (await f.read.replicaPosition()) >= 1);
      await f.read.projectionPosition();
      const projected = f.read.changed(60_000);
      await f.projections.commit({ expectedCheckpoint: 0, checkpoint: 1, documents: [], state: [] });
      await projected;
      await eventually(f.read, async () => (await f.read.projectionPosition()) >= 1);
    });

    it('changed() ends on its timeout when nothing moves, and at once on abort', async () => {
      await f.read.replicaPosition();
      await f.read.changed(20);
      const abort = new AbortController();
      const waiting = f.read.changed(60_000, abort.signal);
      abort.abort();
      await waiting;
      expect(await f.read.replicaPosition()).toBe(0);
    });
  });
}
