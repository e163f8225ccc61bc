// Every filter a client can write on SQLite is served by an index: for each entity and each field it
// may filter by (`id` and the catalogue's queryFields), the statements the read store compiles for an
// equality, an `in` and (numbers, dates, timestamps) a range, now and at a past time, are read back
// with EXPLAIN QUERY PLAN: none scans a whole table.
import { type EntityName, entities, entityNames, type FieldKind } from '@eggmesh/schema';
import type { Where } from '@eggmesh/store';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openReadFixture, type ReadFixture } from './read-fixture.js';

/** The statements run while a query runs (their SQL and database), recorded by Statement#all. */
const ran: Array<{ db: Database.Database; sql: string }> = [];
const statement = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Database.Statement;
const all = statement.all;
const get = statement.get;
let fixture: ReadFixture;

beforeAll(() => {
  statement.all = function (this: Database.Statement, ...params: unknown[]) {
    ran.push({ db: this.database, sql: this.source });
    return all.apply(this, params);
  } as typeof all;
  statement.get = function (this: Database.Statement, ...params: unknown[]) {
    ran.push({ db: this.database, sql: this.source });
    return get.apply(this, params);
  } as typeof get;
  fixture = openReadFixture('eggmesh-plans-', () => 1);
});
afterAll(async () => {
  statement.all = all;
  statement.get = get;
  await fixture.close();
});

const sample: Readonly<Record<FieldKind | 'id', string | number>> = {
  id: '00000000-0000-4000-8000-000000000001',
  enum: 'x',
  string: 'x',
  date: '2025-01-01',
  number: 1,
  timestamp: '2026-01-01T00:00:00Z',
};

/** The plan lines of a statement that ran. */
function explain(ran: { db: Database.Database; sql: string }): string[] {
  const params = (ran.sql.match(/\?/g) ?? []).map(() => null);
  return (ran.db.prepare(`EXPLAIN QUERY PLAN ${ran.sql}`).all(...params) as Array<{ detail: string }>).map(
    (row) => row.detail,
  );
}

/** The plan lines of the page statement a query runs (the one with ORDER BY … LIMIT). */
async function planOf(entity: EntityName, where: Where, at?: number): Promise<string[]> {
  ran.length = 0;
  await fixture.read.query(entity, { where, first: 5, at });
  const page = ran.find((p) => /ORDER BY .* LIMIT/.test(p.sql));
  if (!page) throw new Error(`no page statement ran for ${entity} ${JSON.stringify(where)}`);
  return explain(page);
}

/** A line that reads every row of a table: `SCAN t` without an index. */
const fullScan = (line: string) => /^SCAN \w+$/.test(line.trim());

it.each(entityNames)(
  '%s: every filter field is searched through an index, now and at a past time',
  async (entity) => {
    const fields = [['id', 'id'] as const, ...Object.entries(entities[entity].queryFields)];
    for (const [field, kind] of fields) {
      const value = sample[kind];
      const filters: Where[] = [{ [field]: { eq: value } }, { [field]: { in: [value, value] } }];
      if (kind === 'number' || kind === 'date' || kind === 'timestamp')
        filters.push({ [field]: { gte: value } });
      for (const where of filters) {
        for (const at of [undefined, 1_000]) {
          const plan = await planOf(entity, where, at);
          const label = `${entity} ${JSON.stringify(where)} at=${at}: ${plan.join(' | ')}`;
          expect(plan.some(fullScan), label).toBe(false);
          expect(
            plan.some((line) => /USING (COVERING )?INDEX|PRIMARY KEY/.test(line)),
            label,
          ).toBe(true);
        }
      }
    }
  },
);

it('an aggregate and a total count read the current rows alone, through an index: no second read of each row in the versions', async () => {
  const where: Where = {
    farm_id: { in: [sample.id as string] },
    timestamp: { gte: sample.timestamp as string },
  };
  ran.length = 0;
  await fixture.read.aggregate('lay_report', {
    where,
    groupBy: ['farm_id'],
    bucket: { field: 'timestamp', unit: 'day' },
    fields: ['eggs'],
    maxGroups: 10,
  });
  await fixture.read.query('lay_report', { where, first: 5, count: true });
  const aggregate = ran.find((p) => /GROUP BY/.test(p.sql));
  const count = ran.find((p) => /SELECT count\(\*\) FROM/.test(p.sql));
  for (const statement of [aggregate, count]) {
    expect(statement).toBeDefined();
    const plan = explain(statement!);
    const label = `${statement!.sql}: ${plan.join(' | ')}`;
    expect(statement!.sql, label).not.toMatch(/lay_report_versions/);
    expect(
      plan.some((line) => /\bp\b|lay_report_versions/.test(line)),
      label,
    ).toBe(false);
    expect(plan.some(fullScan), label).toBe(false);
    expect(
      plan.some((line) => /USING (COVERING )?INDEX/.test(line)),
      label,
    ).toBe(true);
  }
  // The page itself still reads each row's payload from its version.
  const page = ran.find((p) => /ORDER BY .* LIMIT/.test(p.sql) && !/GROUP BY/.test(p.sql));
  expect(explain(page!).some((line) => /lay_report_versions|\bp\b/.test(line))).toBe(true);
});
