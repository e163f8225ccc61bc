import type pg from 'pg';
import { legacyId } from './mapping.js';

// A reconciliation of the clean API against the SAP tables, computed on each side independently:
// SQL over the legacy rows (not through the layer's mapping), REST and GraphQL on the clean API. The
// legacy tests, `pnpm legacy:faults` and `pnpm bench:legacy` use it to say whether the two agree.

/** The SAP tables' entities: clean entity, table, key columns. */
const sapKeys: readonly (readonly [string, string, string])[] = [
  ['farm', 'zfarm_mstr', 'werks'],
  ['coop', 'zstall_mstr', 'stall_nr'],
  ['hen', 'zequi_hen', 'equnr'],
  ['container', 'zbehaelt_mstr', 'behaelt_nr'],
  ['consumer', 'zkunde_vbr', 'kunnr'],
  ['lay_report', 'zafru_lege', 'aufnr'],
  ['storage_deposit', 'zmseg_101', 'mblnr, mjahr'],
  ['storage_withdrawal', 'zmseg_201', 'mblnr, mjahr'],
  ['container_transfer', 'zmseg_301', 'mblnr, mjahr'],
  ['consumption_report', 'zmseg_261', 'mblnr, mjahr'],
];

/** One side of the comparison: ids per entity, plus the values the projections must reproduce. */
export interface EconomyView {
  readonly ids: Record<string, string[]>;
  readonly eggsLaid: number;
  readonly henStatus: Record<string, string>;
  /** farm_output, hen_productivity, container_inventory: the order-free fields, one row per document. */
  readonly projections: Record<string, Record<string, unknown>[]>;
}

type Row = Record<string, unknown>;
const byKey = (key: string) => (a: Row, b: Row) => String(a[key]).localeCompare(String(b[key]));
const anyPositive = (row: Row) => Object.values(row).some((value) => typeof value === 'number' && value > 0);
const farmTypes: Record<string, string> = { M: 'megafarm', L: 'local_farm', H: 'homestead' };

const statuses: Record<string, string> = { A: 'active', R: 'retired', D: 'deceased' };

/** What the SAP tables hold for client 100, read with SQL (not through the layer's mapping). */
export async function sapLegacyView(db: pg.Client): Promise<EconomyView> {
  const ids: Record<string, string[]> = {};
  for (const [entity, table, columns] of sapKeys) {
    const rows = await db.query(`SELECT ${columns} FROM sap.${table} WHERE mandt = '100'`);
    ids[entity] = rows.rows
      .map((row: Record<string, string>) =>
        legacyId(
          'sap',
          '100',
          table,
          Object.values(row).map((value) => value.trim()),
        ),
      )
      .sort();
  }
  const laid = await db.query(
    `SELECT coalesce(sum(ei_menge), 0)::int AS eggs FROM sap.zafru_lege WHERE mandt = '100'`,
  );
  const hens = await db.query(`SELECT equnr, stat_cd FROM sap.zequi_hen WHERE mandt = '100'`);
  const id = (table: string, key: string) => legacyId('sap', '100', table, [key.trim()]);
  const farms = await db.query(
    `SELECT f.werks, f.farm_typ_cd, count(h.equnr)::int AS total_hens,
       (count(h.equnr) FILTER (WHERE h.stat_cd = 'A'))::int AS active_hens
     FROM sap.zfarm_mstr f
     LEFT JOIN sap.zstall_mstr s ON s.mandt = f.mandt AND s.werks = f.werks
     LEFT JOIN sap.zequi_hen h ON h.mandt = s.mandt AND h.stall_nr = s.stall_nr
     WHERE f.mandt = '100' GROUP BY f.werks, f.farm_typ_cd`,
  );
  const laying = await db.query(
    `SELECT h.equnr, coalesce(sum(r.ei_menge), 0)::int AS total,
       coalesce(sum(r.ei_menge) FILTER (WHERE r.qual_cd IS NULL OR r.qual_cd IN ('A', 'D')), 0)::int AS good
     FROM sap.zequi_hen h LEFT JOIN sap.zafru_lege r ON r.mandt = h.mandt AND r.equnr = h.equnr
     WHERE h.mandt = '100' GROUP BY h.equnr`,
  );
  const sum = (table: string, column: string) =>
    `(SELECT coalesce(sum(m.ei_menge), 0) FROM sap.${table} m WHERE m.mandt = c.mandt AND m.${column} = c.behaelt_nr)::int`;
  const containers = await db.query(
    `SELECT c.behaelt_nr, ${sum('zmseg_101', 'behaelt_nr')} AS total_deposits,
       ${sum('zmseg_201', 'behaelt_nr')} AS total_withdrawals,
       ${sum('zmseg_301', 'ziel_beh_nr')} AS total_transfers_in,
       ${sum('zmseg_301', 'quell_beh_nr')} AS total_transfers_out,
       ${sum('zmseg_261', 'behaelt_nr')} AS total_consumed
     FROM sap.zbehaelt_mstr c WHERE c.mandt = '100'`,
  );
  const projections = {
    farm_output: farms.rows
      .map((row) => ({
        farm_id: id('zfarm_mstr', row.werks),
        farm_type: farmTypes[row.farm_typ_cd] ?? `unknown ${row.farm_typ_cd}`,
        total_hens: row.total_hens,
        active_hens: row.active_hens,
      }))
      .sort(byKey('farm_id')),
    hen_productivity: laying.rows
      .filter((row) => row.total > 0)
      .map((row) => ({
        hen_id: id('zequi_hen', row.equnr),
        total_eggs: row.total,
        quality_rate: Math.round(Math.min(1, row.good / row.total) * 1e4) / 1e4,
      }))
      .sort(byKey('hen_id')),
    container_inventory: containers.rows
      .filter(anyPositive)
      .map(({ behaelt_nr, ...totals }) => ({ container_id: id('zbehaelt_mstr', behaelt_nr), ...totals }))
      .sort(byKey('container_id')),
  };
  return {
    projections,
    ids,
    eggsLaid: laid.rows[0].eggs,
    henStatus: Object.fromEntries(
      hens.rows.map((row: Record<string, string>) => [
        legacyId('sap', '100', 'zequi_hen', [row.equnr!.trim()]),
        statuses[row.stat_cd!] ?? row.stat_cd!,
      ]),
    ),
  };
}

/**
 * What the clean API serves (REST lists on the public port), with duplicates kept so they show; read
 * `pageSize` records a request (at most the API's list limit).
 */
export async function sapCleanView(base: string, pageSize = 5000): Promise<EconomyView> {
  // Every record, page by page in id order (the API caps a page; x-next-cursor names the next one).
  const list = async (entity: string) => {
    const rows: Record<string, unknown>[] = [];
    for (let cursor: string | null = ''; cursor !== null; ) {
      const after = cursor ? `&after=${encodeURIComponent(cursor)}` : '';
      const response = await fetch(`${base}/${entity}/api?limit=${pageSize}${after}`);
      if (!response.ok) throw new Error(`${entity}: ${response.status} ${await response.text()}`);
      rows.push(...((await response.json()) as Record<string, unknown>[]));
      cursor = response.headers.get('x-next-cursor');
    }
    return rows;
  };
  const ids: Record<string, string[]> = {};
  for (const [entity] of sapKeys) ids[entity] = (await list(entity)).map((row) => String(row.id)).sort();
  const reports = await list('lay_report');
  const hens = await list('hen');
  const graph = async (entity: string, fields: string) => {
    const response = await fetch(`${base}/${entity}/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ getAll { ${fields} } }` }),
    });
    const body = (await response.json()) as { data?: { getAll: Row[] }; errors?: unknown };
    if (!body.data) throw new Error(`${entity}/graph: ${JSON.stringify(body.errors)}`);
    return body.data.getAll;
  };
  const projections = {
    farm_output: (await graph('farm_output', 'farm_id farm_type total_hens active_hens')).sort(
      byKey('farm_id'),
    ),
    hen_productivity: (await graph('hen_productivity', 'hen_id total_eggs quality_rate'))
      .filter((row) => Number(row.total_eggs) > 0)
      .sort(byKey('hen_id')),
    container_inventory: (
      await graph(
        'container_inventory',
        'container_id total_deposits total_withdrawals total_transfers_in total_transfers_out total_consumed',
      )
    )
      .filter(anyPositive)
      .sort(byKey('container_id')),
  };
  return {
    projections,
    ids,
    eggsLaid: reports.reduce((sum, row) => sum + Number(row.eggs), 0),
    henStatus: Object.fromEntries(hens.map((row) => [String(row.id), String(row.status)])),
  };
}

/** The differences between the two views, one line each (empty: equal). */
export function viewDifferences(legacy: EconomyView, clean: EconomyView): string[] {
  const out: string[] = [];
  for (const [entity] of sapKeys) {
    const want = legacy.ids[entity] ?? [];
    const got = clean.ids[entity] ?? [];
    const wanted = new Set(want);
    const have = new Set(got);
    const missing = want.filter((id) => !have.has(id));
    const extra = got.filter((id) => !wanted.has(id));
    const duplicates = got.length - have.size;
    if (missing.length + extra.length + duplicates > 0)
      out.push(
        `${entity}: ${missing.length} missing, ${extra.length} not in the legacy tables, ${duplicates} duplicated`,
      );
  }
  if (legacy.eggsLaid !== clean.eggsLaid)
    out.push(`eggs laid: legacy ${legacy.eggsLaid}, clean ${clean.eggsLaid}`);
  const wrongStatus = Object.entries(legacy.henStatus).filter(
    ([id, status]) => clean.henStatus[id] !== status,
  );
  if (wrongStatus.length > 0) out.push(`hen status: ${wrongStatus.length} differ`);
  for (const [name, want] of Object.entries(legacy.projections)) {
    const got = clean.projections[name] ?? [];
    const served = new Set(got.map((row) => JSON.stringify(row)));
    const wrong = want.filter((row) => !served.has(JSON.stringify(row))).length;
    if (wrong > 0 || got.length !== want.length)
      out.push(
        `${name}: ${wrong} of ${want.length} documents differ from SQL over the tables (${got.length} served)`,
      );
  }
  return out;
}

/** Counts the clean view holds, for the report. */
export const viewTotals = (view: EconomyView) =>
  Object.fromEntries(Object.entries(view.ids).map(([entity, ids]) => [entity, ids.length]));
