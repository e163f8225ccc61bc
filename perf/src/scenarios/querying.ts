import { dataFiles, openPrimaryStore } from '@eggmesh/store-sqlite';
import Database from 'better-sqlite3';
import { DAY_MS } from '../data/dataset.js';
import { checkEqual, graphql } from '../lib/gate.js';
import { Stack } from '../lib/stack.js';
import { median, summarizeLatencies } from '../lib/stats.js';
import { Picker } from './common.js';
import type { Scenario, ScenarioContext } from './types.js';

type Doc = Record<string, unknown>;

/** Rows of a getAll page: a list a client reads whole, the yardstick of the aggregate. */
const PAGE_ROWS = 1000;
/** Rows of the filtered page, and of the getAll page it is measured against (the same fixed cost). */
const SMALL_PAGE = 20;
/** Farms in one aggregate: eggs per farm per day of these farms over the last 30 days. */
const AGGREGATE_FARMS = 10;
const HEN_FIELDS = ['id', 'name', 'coop_id', 'breed', 'status', 'dob'] as const;

/** One query, asked of the read-api and, hand-written, of the same SQLite file. */
interface Case {
  readonly name: string;
  /** The getAll case whose `ours ÷ SQL` this one's is divided by (none: it is a yardstick). */
  readonly yardstick?: string;
  /** The variables of one request. */
  variables(picker: Picker): Doc;
  /** Ours: the GraphQL answer as rows. */
  ours(url: string, variables: Doc): Promise<Doc[]>;
  /** The same rows from SQL over the primary file. */
  sql(db: Database.Database, variables: Doc): Doc[];
}

const henRow = (row: { id: string; payload: string }): Doc => {
  const payload = JSON.parse(row.payload) as Doc;
  return Object.fromEntries(HEN_FIELDS.map((f) => [f, f === 'id' ? row.id : (payload[f] ?? null)]));
};

/** `getAll(limit: rows, after:)` of hens: a plain list page, the yardstick of a query of its size. */
const getAllCase = (rows: number): Case => ({
  name: `hen getAll (${rows} rows)`,
  variables: (p) => ({ after: p.id('hen') }),
  async ours(url, v) {
    const data = await graphql(
      `${url}/hen/graph`,
      `query ($after: ID) { getAll(limit: ${rows}, after: $after) { ${HEN_FIELDS.join(' ')} } }`,
      v,
    );
    return data.getAll as Doc[];
  },
  sql: (db, v) =>
    (
      db
        .prepare(
          `SELECT c.id, v.payload FROM hen_current c JOIN hen_versions v ON v.seq = c.version
           WHERE c.id > ? ORDER BY c.id LIMIT ${rows}`,
        )
        .all(v.after) as Array<{ id: string; payload: string }>
    ).map(henRow),
});

function cases(anchorMs: number): Case[] {
  const from = new Date(anchorMs - 30 * DAY_MS).toISOString();
  const to = new Date(anchorMs).toISOString();
  const large = getAllCase(PAGE_ROWS);
  const small = getAllCase(SMALL_PAGE);
  return [
    large,
    small,
    {
      name: `hens of a coop, by status, newest first (page of ${SMALL_PAGE})`,
      yardstick: small.name,
      variables: (p) => ({ coop: p.id('coop') }),
      async ours(url, v) {
        const data = await graphql(
          `${url}/graphql`,
          `query ($coop: ID) { hensConnection(where: { coop_id: { eq: $coop }, status: { in: ["active", "retired"] } }, orderBy: [{ dob: DESC }], first: ${SMALL_PAGE}) { nodes { ${HEN_FIELDS.join(' ')} } } }`,
          v,
        );
        return (data.hensConnection as { nodes: Doc[] }).nodes;
      },
      sql: (db, v) =>
        (
          db
            .prepare(
              `SELECT c.id, v.payload FROM hen_current c JOIN hen_versions v ON v.seq = c.version
               WHERE c.coop_id = ? AND c.status IN ('active', 'retired') ORDER BY c.dob DESC, c.id LIMIT ${SMALL_PAGE}`,
            )
            .all(v.coop) as Array<{ id: string; payload: string }>
        ).map(henRow),
    },
    {
      name: `eggs per farm per day, ${AGGREGATE_FARMS} farms, 30 days`,
      yardstick: large.name,
      variables: (p) => ({ farms: Array.from({ length: AGGREGATE_FARMS }, () => p.id('farm')) }),
      async ours(url, v) {
        const data = await graphql(
          `${url}/graphql`,
          `query ($farms: [ID!]) { layReportsAggregate(where: { farm_id: { in: $farms }, timestamp: { gte: "${from}", lt: "${to}" } }, groupBy: [farm_id], bucket: DAY) { group { farm_id } bucket count sum { eggs } } }`,
          v,
        );
        return (data.layReportsAggregate as Array<Doc & { group: Doc; sum: Doc }>).map((g) => ({
          farm_id: g.group.farm_id,
          day: Date.parse(g.bucket as string),
          count: g.count,
          eggs: g.sum.eggs,
        }));
      },
      sql: (db, v) =>
        db
          .prepare(
            `SELECT farm_id, "timestamp" - "timestamp" % ${DAY_MS} AS day, count(*) AS count, coalesce(sum(eggs), 0) AS eggs
             FROM lay_report_current WHERE farm_id IN (SELECT value FROM json_each(?)) AND "timestamp" >= ? AND "timestamp" < ?
             GROUP BY 1, 2 ORDER BY 1, 2`,
          )
          .all(JSON.stringify(v.farms), Date.parse(from), Date.parse(to)) as Doc[],
    },
  ];
}

/**
 * Sequential requests for `seconds`: the latency of each (ms) and the rows each answered. Between
 * two requests, outside the timing, the event loop gets a turn: a run of synchronous SQL would
 * otherwise hold it for the whole run, and the idle HTTP connection the server closed meanwhile
 * (its keep-alive timeout) would be reused by the next request of our side and fail.
 */
async function timed(seconds: number, once: () => Promise<number> | number) {
  const latencies: number[] = [];
  let rows = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const start = performance.now();
    rows += await once();
    latencies.push(performance.now() - start);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { latencies, rows };
}

export const querying: Scenario = {
  name: 'querying',
  description:
    'Filters, sorts and aggregates against hand-written SQL: getAll pages of 1000 and 20 rows, a filtered and sorted page of hens ' +
    '(hensConnection) and eggs per farm per day over 30 days (layReportsAggregate), each asked of a read-api on a ' +
    "freshly projected copy of the run's dataset by one client, one request at a time, and, run by run beside it, as " +
    'hand-written SQL through better-sqlite3 on the same SQLite file (in the bench process: no HTTP, no GraphQL). ' +
    'Per case: p50 per request and per answered row, ours ÷ SQL; the filtered page should cost what a getAll page of ' +
    'its size costs, and the aggregate what a getAll of 1000 rows costs, over the SQL each runs (ratio ÷ that ' +
    "getAll's ratio near 1 or below).",
  services: { ours: [], baseline: [] },
  async run(context: ScenarioContext) {
    const { plan } = context;
    const data = await context.projected(context.preset);
    const file = dataFiles(data.dataDir).primary;
    // A dataset cached by an older eggmesh lacks the columns of fields that became queryable since;
    // the write side adds them when it opens the file, as the write-api does before any read-api.
    await openPrimaryStore({ file }).close();
    const stack = new Stack(data.stackOptions);
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      await stack.ensure(['read-api']);
      const url = stack.url('read-api');
      const picker = new Picker(data.dataset, context.rng);
      const figures: Record<string, number> = {};
      const notes: string[] = [];
      const ratios = new Map<string, number>();
      const all = cases(data.dataset.anchorMs);
      for (const c of all) {
        // The same answer both ways, on a few draws, before anything is timed.
        for (let i = 0; i < 3; i++) {
          const v = c.variables(picker);
          checkEqual(await c.ours(url, v), c.sql(db, v), `querying ${c.name} ${JSON.stringify(v)}`);
        }
        const sides = {
          ours: async () => (await c.ours(url, c.variables(picker))).length,
          sql: () => c.sql(db, c.variables(picker)).length,
        };
        if (plan.warmupSec > 0) {
          await timed(plan.warmupSec, sides.ours);
          await timed(plan.warmupSec, sides.sql);
        }
        const p50 = { ours: [] as number[], sql: [] as number[] };
        const perRow = { ours: [] as number[], sql: [] as number[] };
        for (let i = 0; i < plan.runs; i++) {
          // Alternate which side goes first, so a drift of the machine's load falls on both.
          for (const side of i % 2 === 0 ? (['ours', 'sql'] as const) : (['sql', 'ours'] as const)) {
            const { latencies, rows } = await timed(plan.durationSec, sides[side]);
            const s = summarizeLatencies(latencies);
            p50[side].push(s.p50);
            perRow[side].push((s.p50 * latencies.length * 1000) / Math.max(1, rows));
          }
        }
        const ours = median(p50.ours);
        const sql = median(p50.sql);
        figures[`${c.name}: ours p50 ms`] = ours;
        figures[`${c.name}: SQL p50 ms`] = sql;
        figures[`${c.name}: ours µs per row`] = median(perRow.ours);
        figures[`${c.name}: SQL µs per row`] = median(perRow.sql);
        figures[`${c.name}: ours ÷ SQL p50`] = ours / sql;
        ratios.set(c.name, ours / sql);
        context.log(
          `  querying/${c.name}: ours p50 ${ours.toFixed(2)} ms, SQL ${sql.toFixed(3)} ms, ours ÷ SQL ${(ours / sql).toFixed(1)}; per row ${median(perRow.ours).toFixed(1)} µs vs ${median(perRow.sql).toFixed(1)} µs`,
        );
      }
      for (const c of all) {
        if (c.yardstick)
          figures[`${c.name}: (ours ÷ SQL) ÷ ${c.yardstick}'s`] =
            ratios.get(c.name)! / ratios.get(c.yardstick)!;
      }
      notes.push(
        `Dataset ${data.preset}: ${data.dataset.counts.total.toLocaleString('en-US')} rows. One client, sequential: ours includes HTTP, GraphQL and JSON; SQL is the statement and JSON.parse of each payload in the bench process. Per-row figures divide by the rows answered (aggregate: groups).`,
      );
      return { name: 'querying', description: this.description, cases: [], figures, notes };
    } finally {
      db.close();
      await stack.stopAll();
    }
  },
};
