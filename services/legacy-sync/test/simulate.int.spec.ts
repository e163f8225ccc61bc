import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPostgres } from '../../../infra/postgres/server.mjs';
import { start as startPostgres } from '../../../infra/postgres/server.mjs';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
// The command runs from its build, as `pnpm legacy:simulate` does: build it (tsc -b is incremental).
const build = () =>
  execFileSync(
    process.execPath,
    [join(REPO, 'node_modules/typescript/bin/tsc'), '-b', 'services/legacy-sync'],
    {
      cwd: REPO,
      stdio: 'pipe',
      timeout: 170_000,
    },
  );

const run = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(REPO, 'services/legacy-sync/dist/simulate.js'), ...args],
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });

describe('pnpm legacy:simulate', () => {
  let postgres: RunningPostgres;

  beforeAll(async () => {
    build();
    postgres = await startPostgres();
    const admin = new pg.Client({ connectionString: postgres.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE legacy');
    await admin.end();
  }, 300_000);

  afterAll(async () => {
    await postgres?.stop();
  });

  it('creates the SAP and the Salesforce tables, fills an empty database, makes the changes asked for, and refuses to fill twice', async () => {
    const url = postgres.url('legacy');
    const first = await run(['--source', 'sap', '--rate', '200', '--changes', '40', '--url', url]);
    expect(first.code, first.stderr).toBe(0);
    const counts = JSON.parse(/changes: (.*)/.exec(first.stdout)?.[1] ?? '{}') as Record<string, number>;
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const farms = await db.query(`SELECT count(*)::int AS n FROM sap.zfarm_mstr WHERE mandt = '100'`);
    const hens = await db.query(`SELECT count(*)::int AS n FROM sap.zequi_hen WHERE mandt = '100'`);
    const reports = await db.query(`SELECT count(*)::int AS n FROM sap.zafru_lege WHERE mandt = '100'`);
    await db.end();
    expect(farms.rows[0].n).toBe(counts.farm);
    expect(hens.rows[0].n).toBe(counts.hen);
    expect(reports.rows[0].n).toBe(counts.lay_report);
    expect(reports.rows[0].n).toBeGreaterThan(30); // one per hen of the filled economy, then more

    const again = await run(['--source', 'sap', '--rate', '200', '--changes', '1', '--url', url]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already hold data/);
    const unknown = await run(['--source', 'mainframe', '--url', url]);
    expect(unknown.code).toBe(2);

    // The Salesforce org, in the same database: its own schema, its own economy; recycled records stay
    // as rows with isdeleted set.
    const org = await run(['--source', 'salesforce', '--rate', '200', '--changes', '80', '--url', url]);
    expect(org.code, org.stderr).toBe(0);
    const made = JSON.parse(/changes: (.*)/.exec(org.stdout)?.[1] ?? '{}') as Record<string, number>;
    const sf = new pg.Client({ connectionString: url });
    await sf.connect();
    const count = async (sql: string) => (await sf.query(sql)).rows[0].n as number;
    expect(await count('SELECT count(*)::int AS n FROM salesforce.farm__c')).toBe(made.farm);
    expect(await count('SELECT count(*)::int AS n FROM salesforce.hen__c')).toBe(made.hen);
    expect(await count('SELECT count(*)::int AS n FROM salesforce.lay_report__c')).toBe(made.lay_report);
    expect(made.soft_delete).toBeGreaterThan(0);
    const recycled = await sf.query(
      `SELECT sum(n)::int AS n FROM (${[
        'lay_report__c',
        'storage_deposit__c',
        'storage_withdrawal__c',
        'container_transfer__c',
        'consumption_report__c',
      ]
        .map((table) => `SELECT count(*) AS n FROM salesforce.${table} WHERE isdeleted`)
        .join(' UNION ALL ')}) AS recycled`,
    );
    expect(recycled.rows[0].n).toBe(made.soft_delete);
    expect(
      await count(`SELECT count(*)::int AS n FROM salesforce.lay_report__c WHERE name LIKE 'LR-%'`),
    ).toBe(made.lay_report);
    await sf.end();
  });
});
