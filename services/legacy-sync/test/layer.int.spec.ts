import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Projector } from '@eggmesh/projector';
import { parseConfig } from '@eggmesh/service-kit';
import {
  dataFiles,
  openPrimaryStore,
  openProjectionStore,
  ProjectionReader,
  type SqlitePrimaryStore,
  SqliteReadStore,
} from '@eggmesh/store-sqlite';
import { buildApp } from '@eggmesh/write-api';
import type { FastifyInstance } from 'fastify';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../../infra/connect/server.mjs';
import { start as startConnect } from '../../../infra/connect/server.mjs';
import { freePort } from '../../../infra/ports.mjs';
import type { RunningPostgres } from '../../../infra/postgres/server.mjs';
import { start as startPostgres } from '../../../infra/postgres/server.mjs';
import { sharedKafkaBrokers } from '../../../infra/test/shared-servers.js';
import {
  applySchema,
  changeTopic,
  connectorConfig,
  LegacySync,
  legacyId,
  putConnector,
  SalesforceSimulator,
  SapSimulator,
  type SourceMapping,
  salesforceMapping,
  sapMapping,
  waitRunning,
} from '../src/index.js';

// The anti-corruption layer on real CDC: SAP rows in the project's PostgreSQL, Debezium on the
// project's Connect worker, the layer writing through a real write-api (SQLite).
describe('the anti-corruption layer on real CDC (SAP and Salesforce sources)', () => {
  let postgres: RunningPostgres;
  const apps: FastifyInstance[] = [];
  let connect: RunningWorker | undefined;
  let brokers: string;
  let writeUrl: string;
  let db: pg.Client;
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-legacy-layer-'));
  const prefix = `acl${Date.now().toString(36)}`;
  const syncs: LegacySync[] = [];
  // The layer's clock runs ahead by `skew` once a test wants the park TTL to have passed.
  let skew = 0;

  beforeAll(async () => {
    [postgres, brokers] = await Promise.all([startPostgres(), sharedKafkaBrokers()]);
    const admin = new pg.Client({ connectionString: postgres.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE legacy');
    await admin.end();
    db = new pg.Client({ connectionString: postgres.url('legacy') });
    db.on('error', () => {});
    await db.connect();
    await applySchema(db, 'sap');
    [, writeUrl] = await writeApi('clean');
  }, 300_000);

  afterAll(async () => {
    for (const sync of syncs) await sync.stop().catch(() => undefined);
    await connect?.stop();
    await db?.end().catch(() => undefined);
    await postgres?.stop();
    for (const one of apps) await one.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A write-api on SQLite files of its own under `dir/<name>`. */
  const writeApi = async (name: string): Promise<[FastifyInstance, string, SqlitePrimaryStore, string]> => {
    const config = parseConfig({ EGGMESH_DATA_DIR: join(dir, name) });
    const files = dataFiles(join(dir, name));
    const primary = openPrimaryStore({ file: files.primary });
    const reader = new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir));
    const one = await buildApp({ config, primary, reader });
    apps.push(one);
    await one.listen({ port: 0, host: '127.0.0.1' });
    const address = one.server.address();
    return [
      one,
      `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
      primary,
      files.projectionsDir,
    ];
  };
  /** Waits until the service's consumer group has committed every change of every table of `mapping`. */
  const untilCommitted = async (mapping: SourceMapping, topicPrefix: string) => {
    const kafka = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING });
    const kafkaAdmin = kafka.admin();
    await kafkaAdmin.connect();
    const source = mapping.source as 'sap' | 'salesforce';
    const topics = mapping.tables.map((table) => changeTopic(topicPrefix, source, table.table));
    try {
      await until(async () => {
        const committed = await kafkaAdmin.fetchOffsets({
          groupId: `eggmesh-legacy-sync.${topicPrefix}.${source}`,
          topics,
        });
        for (const topic of topics) {
          const high = (await kafkaAdmin.fetchTopicOffsets(topic))[0]?.high ?? '0';
          const done = committed.find((one) => one.topic === topic)?.partitions[0]?.offset ?? '-1';
          if (high !== '0' && done !== high) return false;
        }
        return true;
      });
    } finally {
      await kafkaAdmin.disconnect();
    }
  };
  const admin = (user = 'JSMITH') => `'${user}', '20250301', '081500', NULL, NULL, NULL`;
  const id = (table: string, ...key: string[]) => legacyId('sap', '100', table, key);
  const get = async (entity: string, key: string) => {
    const response = await fetch(`${writeUrl}/${entity}/api/${key}`);
    return {
      status: response.status,
      body: response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined,
    };
  };
  const until = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 900; i++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error('condition not met in 180 s');
  };
  const layer = (mapping: SourceMapping) => {
    const sync = new LegacySync({
      mapping,
      brokers,
      topicPrefix: prefix,
      writeUrl,
      stateFile: join(dir, 'layer.db'),
      groupId: `${prefix}-layer`,
      deadLetterTopic: `${prefix}.dead-letter`,
      parkTtlMs: 600_000,
      clock: () => Date.now() + skew,
    });
    syncs.push(sync);
    return sync;
  };

  it('maps, parks children until their parents land, dead-letters unknown codes and parents that never arrive, ignores other clients, and retries after a mapping fix', async () => {
    await db.query(
      `INSERT INTO sap.zfarm_mstr VALUES ('100', '1000', '1000', 'Sonnenhof', 'M', 'NORTH', 'Huber', ${admin()})`,
    );
    await db.query(
      `INSERT INTO sap.zfarm_mstr VALUES ('200', '1000', '1000', 'Testmandant', 'M', 'NORTH', NULL, ${admin()})`,
    );
    await db.query(
      `INSERT INTO sap.zstall_mstr VALUES ('100', 'S0000001', '1000', 'Stall Ost', 120, 'STD', ${admin()})`,
    );

    connect = await startConnect({ brokers, group: `${prefix}-connect` });
    const name = `${prefix}-sap`;
    await putConnector(
      connect.url,
      name,
      connectorConfig(
        { host: postgres.host, port: postgres.port, user: postgres.user, database: 'legacy' },
        'sap',
        prefix,
      ),
    );
    await waitRunning(connect.url, name);
    const sync = layer(sapMapping);
    await sync.start();

    // A hen and its lay report whose coop does not exist yet: both wait, and apply when the coop lands.
    await db.query(
      `INSERT INTO sap.zequi_hen VALUES ('100', '000000000000000042', 'S0000002', 'Berta', 'RIR', '20240115', 'A', ${admin()})`,
    );
    await db.query(
      `INSERT INTO sap.zafru_lege VALUES ('100', '000000000007', '000000000000000042', '1000', '1000', 12, '20250302', '063000', 'A', ${admin()})`,
    );
    await db.query(
      `INSERT INTO sap.zfarm_mstr VALUES ('100', '3000', '1000', 'Unbekannt', 'X', 'SOUTH', NULL, ${admin()})`,
    );
    // A hen booked into a coop that never comes: it waits for the park TTL, then dead-letters.
    await db.query(
      `INSERT INTO sap.zequi_hen VALUES ('100', '000000000000000043', 'S0000099', 'Waise', 'LEG', '20240115', 'A', ${admin()})`,
    );
    await db.query(
      `UPDATE sap.zfarm_mstr SET farm_nm = 'Sonnenhof Nord' WHERE mandt = '100' AND werks = '1000'`,
    );
    await db.query(`DELETE FROM sap.zstall_mstr WHERE mandt = '100' AND stall_nr = 'S0000001'`);
    // A container that never became a record (its type code is unknown), then deleted: its dead letter
    // goes, and the delete of an id never applied is counted, not an error.
    await db.query(
      `INSERT INTO sap.zbehaelt_mstr VALUES ('100', 'C0000009', 'Kiste', 'Z', 100, 'NORTH', 'L001', ${admin()})`,
    );
    await db.query(`DELETE FROM sap.zbehaelt_mstr WHERE mandt = '100' AND behaelt_nr = 'C0000009'`);
    await until(async () => sync.status().parked === 3);
    expect((await get('hen', id('zequi_hen', '000000000000000042'))).status).toBe(404);

    await db.query(
      `INSERT INTO sap.zstall_mstr VALUES ('100', 'S0000002', '1000', 'Stall West', 80, 'MOB', ${admin()})`,
    );
    await until(async () => (await get('lay_report', id('zafru_lege', '000000000007'))).status === 200);

    expect((await get('farm', id('zfarm_mstr', '1000'))).body).toEqual({
      id: id('zfarm_mstr', '1000'),
      name: 'Sonnenhof Nord',
      farm_type: 'megafarm',
      zone: 'NORTH',
      owner: 'Huber',
    });
    expect((await get('hen', id('zequi_hen', '000000000000000042'))).body).toEqual({
      id: id('zequi_hen', '000000000000000042'),
      name: 'Berta',
      coop_id: id('zstall_mstr', 'S0000002'),
      breed: 'Rhode Island Red',
      dob: '2024-01-15',
      status: 'active',
    });
    expect((await get('lay_report', id('zafru_lege', '000000000007'))).body).toEqual({
      id: id('zafru_lege', '000000000007'),
      hen_id: id('zequi_hen', '000000000000000042'),
      coop_id: id('zstall_mstr', 'S0000002'),
      farm_id: id('zfarm_mstr', '1000'),
      eggs: 12,
      timestamp: '2025-03-02T06:30:00.000Z',
      quality: 'grade_a',
    });
    // The deleted coop is gone; client 200's farm never became a record.
    await until(async () => (await get('coop', id('zstall_mstr', 'S0000001'))).status === 404);
    expect((await get('farm', legacyId('sap', '200', 'zfarm_mstr', ['1000']))).status).toBe(404);
    const farms = (await (await fetch(`${writeUrl}/farm/api`)).json()) as { id: string }[];
    expect(farms.map((farm) => farm.id)).toEqual([id('zfarm_mstr', '1000')]);

    // The orphan still waits; once its TTL has passed (the layer's clock moves on) it dead-letters.
    expect(sync.status().parked).toBe(1);
    expect((await get('hen', id('zequi_hen', '000000000000000043'))).status).toBe(404);
    skew = 600_001;
    await until(async () => sync.status().parked === 0);
    const status = sync.status();
    const orphan = {
      table: 'zequi_hen',
      key: '000000000000000043',
      reason: `missing parent ${id('zstall_mstr', 'S0000099')}`,
    };
    expect(status.deadLetters).toEqual([
      { table: 'zfarm_mstr', key: '3000', reason: "farm_typ_cd: unknown code 'X'" },
      orphan,
    ]);
    const metrics = await sync.registry.metrics();
    expect(metrics).toMatch(/eggmesh_legacy_dead_lettered_total\{source="sap",table="zfarm_mstr"\} 1/);
    expect(metrics).toMatch(/eggmesh_legacy_dead_lettered_total\{source="sap",table="zbehaelt_mstr"\} 1/);
    expect(metrics).toMatch(/eggmesh_legacy_dead_lettered_total\{source="sap",table="zequi_hen"\} 1/);
    // The hens and the lay report parked for certain; the snapshot's coop may have beaten its farm too
    // (topics are read in parallel).
    expect(
      Number(/eggmesh_legacy_parked_total\{source="sap"\} (\d+)/.exec(metrics)?.[1]),
    ).toBeGreaterThanOrEqual(3);
    expect(metrics).toMatch(/eggmesh_legacy_ignored_total\{source="sap",reason="other_client"\} 1/);
    expect(metrics).toMatch(/eggmesh_legacy_ignored_total\{source="sap",reason="delete_unknown"\} 1/);
    expect(sync.traceBack(id('zequi_hen', '000000000000000042'))).toBe(
      'sap/100/zequi_hen/000000000000000042',
    );

    // The mapping learns the code: the next start applies the dead-lettered row.
    await sync.stop();
    const fixed: SourceMapping = {
      ...sapMapping,
      tables: sapMapping.tables.map((table) =>
        table.table === 'zfarm_mstr'
          ? {
              ...table,
              fields: {
                ...table.fields,
                farm_type: {
                  column: 'farm_typ_cd',
                  codes: { M: 'megafarm', L: 'local_farm', H: 'homestead', X: 'local_farm' },
                },
              },
            }
          : table,
      ),
    };
    const again = layer(fixed);
    await again.start();
    expect((await get('farm', id('zfarm_mstr', '3000'))).body).toMatchObject({
      name: 'Unbekannt',
      farm_type: 'local_farm',
    });
    // The orphan is retried too: its coop still does not exist, so it waits again and stays visible.
    expect(again.status()).toMatchObject({ parked: 1, deadLetters: [orphan] });
  }, 900_000);

  it("replays the simulator's economy through CDC into the clean API: every row of client 100 is one clean record, nothing else is", async () => {
    const admin = new pg.Client({ connectionString: postgres.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE economy');
    await admin.end();
    const economy = new pg.Client({ connectionString: postgres.url('economy') });
    economy.on('error', () => {});
    await economy.connect();
    await applySchema(economy, 'sap');
    const simulator = new SapSimulator(economy, { seed: 7, unknownCodeRate: 0, otherClientRate: 0.3 });
    await simulator.fill({ farms: 2, coopsPerFarm: 2, hensPerCoop: 3, containers: 3, consumers: 2 });

    const economyPrefix = `${prefix}e`;
    if (!connect) throw new Error('the first test starts the Connect worker');
    const name = `${economyPrefix}-sap`;
    await putConnector(
      connect.url,
      name,
      connectorConfig(
        { host: postgres.host, port: postgres.port, user: postgres.user, database: 'economy' },
        'sap',
        economyPrefix,
      ),
    );
    await waitRunning(connect.url, name);
    const sync = new LegacySync({
      mapping: sapMapping,
      brokers,
      topicPrefix: economyPrefix,
      writeUrl,
      stateFile: join(dir, 'economy-layer.db'),
      groupId: `${economyPrefix}-layer`,
      deadLetterTopic: `${economyPrefix}.dead-letter`,
      parkTtlMs: 600_000,
    });
    syncs.push(sync);
    await sync.start();
    for (let i = 0; i < 150; i++) await simulator.step();

    // What the legacy tables say, recomputed here from the rows (not through the mapping).
    const expected = new Map<string, Set<string>>();
    const keys: [string, string, string][] = [
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
    for (const [entity, table, columns] of keys) {
      const rows = await economy.query(`SELECT ${columns} FROM sap.${table} WHERE mandt = '100'`);
      expected.set(
        entity,
        new Set(
          rows.rows.map((row: Record<string, string>) =>
            legacyId(
              'sap',
              '100',
              table,
              Object.values(row).map((v) => v.trim()),
            ),
          ),
        ),
      );
    }
    // Farms, coops and hens of the earlier test share this write-api: count only this economy's ids.
    const clean = async (entity: string) => {
      const ids: string[] = [];
      let after = '';
      for (;;) {
        const response = await fetch(`${writeUrl}/${entity}/api?limit=500${after ? `&after=${after}` : ''}`);
        const page = (await response.json()) as Record<string, unknown>[];
        ids.push(...page.map((record) => String(record.id)));
        if (page.length < 500) return ids;
        after = String(page.at(-1)?.id);
      }
    };
    const ours = (entity: string, ids: string[]) => {
      const legacy = expected.get(entity) ?? new Set<string>();
      const earlier = new Set([
        id('zfarm_mstr', '1000'),
        id('zfarm_mstr', '3000'),
        id('zstall_mstr', 'S0000002'),
        id('zequi_hen', '000000000000000042'),
        id('zafru_lege', '000000000007'),
      ]);
      return ids.filter((one) => legacy.has(one) || !earlier.has(one)).sort();
    };
    await until(async () => {
      for (const [entity] of keys) {
        if (ours(entity, await clean(entity)).join() !== [...(expected.get(entity) ?? [])].sort().join())
          return false;
      }
      return true;
    });
    for (const [entity] of keys) {
      expect(ours(entity, await clean(entity)), entity).toEqual([...(expected.get(entity) ?? [])].sort());
    }
    // Values, recomputed from the legacy rows: eggs laid, and hens by status.
    const laid = await economy.query(
      `SELECT coalesce(sum(ei_menge), 0)::int AS eggs FROM sap.zafru_lege WHERE mandt = '100'`,
    );
    let cleanEggs = 0;
    for (const reportId of expected.get('lay_report') ?? []) {
      cleanEggs += Number(
        ((await (await fetch(`${writeUrl}/lay_report/api/${reportId}`)).json()) as { eggs: number }).eggs,
      );
    }
    expect(cleanEggs).toBe(laid.rows[0].eggs);
    expect(sync.status().deadLettered).toBe(0);
    expect(sync.status().parked).toBe(0);
    expect(simulator.counts.other_client ?? 0).toBeGreaterThan(0);

    // The layer as a service, on a consumer group of its own: it replays every change from the start
    // (a redelivery of all of them: a deleted movement is written again, then deleted again), ends with
    // the clean API as it was, and says so on /ready and /metrics.
    const repo = fileURLToPath(new URL('../../../', import.meta.url));
    execFileSync(
      process.execPath,
      [join(repo, 'node_modules/typescript/bin/tsc'), '-b', 'services/legacy-sync'],
      {
        cwd: repo,
        stdio: 'pipe',
        timeout: 170_000,
      },
    );
    const port = await freePort();
    const child = spawn(process.execPath, [join(repo, 'services/legacy-sync/dist/main.js')], {
      env: {
        ...process.env,
        EGGMESH_KAFKA_BROKERS: brokers,
        EGGMESH_LEGACY_TOPIC_PREFIX: economyPrefix,
        EGGMESH_DATA_DIR: join(dir, 'service'),
        EGGMESH_WRITE_API_URL: writeUrl,
        LEGACY_SYNC_PORT: String(port),
        EGGMESH_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += String(chunk);
    });
    child.stderr.on('data', (chunk) => {
      output += String(chunk);
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const total = [...expected.values()].reduce((sum, ids) => sum + ids.size, 0);
    let ready: { status: string; applied: number; parked: number; deadLettered: number } | undefined;
    await until(async () => {
      try {
        ready = (await (await fetch(`http://127.0.0.1:${port}/ready`)).json()) as typeof ready;
      } catch {
        return false;
      }
      return (ready?.applied ?? 0) >= total && ready?.parked === 0;
    }).catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(ready)}\n${output}`);
    });
    expect(ready).toMatchObject({ status: 'ready', parked: 0, deadLettered: 0 });
    // Its applied count can pass the total mid-replay (redelivered deletes count too): wait until its
    // group has committed every change of every table.
    await untilCommitted(sapMapping, economyPrefix);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(
      /eggmesh_legacy_applied_total\{source="sap",entity="lay_report",op="upsert"\} \d+/,
    );
    expect(metrics).toMatch(/eggmesh_legacy_lag_seconds_count\{topic="[^"]+\.sap\.zafru_lege"\} \d+/);
    for (const [entity] of keys) {
      expect(ours(entity, await clean(entity)), entity).toEqual([...(expected.get(entity) ?? [])].sort());
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await economy.end();
  }, 900_000);

  it("replays the Salesforce org's economy through CDC into a clean API of its own: every live row is one clean record, a recycled one (isdeleted) is deleted", async () => {
    const admin = new pg.Client({ connectionString: postgres.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE org');
    await admin.end();
    const org = new pg.Client({ connectionString: postgres.url('org') });
    org.on('error', () => {});
    await org.connect();
    await applySchema(org, 'salesforce');
    const simulator = new SalesforceSimulator(org, { seed: 7, unknownCodeRate: 0 });
    await simulator.fill({ farms: 2, coopsPerFarm: 2, hensPerCoop: 3, containers: 3, consumers: 2 });
    const [, cleanUrl, cleanPrimary, cleanProjections] = await writeApi('salesforce-clean');

    const orgPrefix = `${prefix}s`;
    if (!connect) throw new Error('the first test starts the Connect worker');
    const name = `${orgPrefix}-salesforce`;
    await putConnector(
      connect.url,
      name,
      connectorConfig(
        { host: postgres.host, port: postgres.port, user: postgres.user, database: 'org' },
        'salesforce',
        orgPrefix,
      ),
    );
    await waitRunning(connect.url, name);
    const sync = new LegacySync({
      mapping: salesforceMapping,
      brokers,
      topicPrefix: orgPrefix,
      writeUrl: cleanUrl,
      stateFile: join(dir, 'salesforce-layer.db'),
      groupId: `${orgPrefix}-layer`,
      deadLetterTopic: `${orgPrefix}.dead-letter`,
      parkTtlMs: 600_000,
    });
    syncs.push(sync);
    await sync.start();
    for (let i = 0; i < 150; i++) await simulator.step();
    expect(simulator.counts.soft_delete ?? 0).toBeGreaterThan(0);

    // What the org's tables say, recomputed here from the rows: the live (not recycled) Ids.
    const tables: [string, string][] = [
      ['farm', 'farm__c'],
      ['coop', 'coop__c'],
      ['hen', 'hen__c'],
      ['container', 'storage_container__c'],
      ['consumer', 'consumer_account__c'],
      ['lay_report', 'lay_report__c'],
      ['storage_deposit', 'storage_deposit__c'],
      ['storage_withdrawal', 'storage_withdrawal__c'],
      ['container_transfer', 'container_transfer__c'],
      ['consumption_report', 'consumption_report__c'],
    ];
    const sfId = (table: string, key: string) => legacyId('salesforce', '', table, [key.trim()]);
    const expected = new Map<string, string[]>();
    const recycled: [string, string][] = [];
    for (const [entity, table] of tables) {
      const rows = await org.query(`SELECT id, isdeleted FROM salesforce.${table}`);
      expected.set(
        entity,
        rows.rows
          .filter((row: { isdeleted: boolean }) => !row.isdeleted)
          .map((row: { id: string }) => sfId(table, row.id))
          .sort(),
      );
      for (const row of rows.rows as { id: string; isdeleted: boolean }[])
        if (row.isdeleted) recycled.push([entity, sfId(table, row.id)]);
    }
    const records = async (entity: string) =>
      (await (await fetch(`${cleanUrl}/${entity}/api?limit=1000`)).json()) as Record<string, unknown>[];
    const ids = async (entity: string) => (await records(entity)).map((record) => String(record.id)).sort();
    await until(async () => {
      for (const [entity] of tables)
        if ((await ids(entity)).join() !== expected.get(entity)?.join()) return false;
      return true;
    });
    for (const [entity] of tables) expect(await ids(entity), entity).toEqual(expected.get(entity));
    expect(recycled.length).toBe(simulator.counts.soft_delete);
    for (const [entity, gone] of recycled)
      expect((await fetch(`${cleanUrl}/${entity}/api/${gone}`)).status).toBe(404);

    // Values, recomputed from the rows: picklist labels in snake case, lookups as ids, no Salesforce field.
    const farms = await org.query(
      'SELECT id, name, farm_type__c, zone__c, owner_name__c FROM salesforce.farm__c WHERE NOT isdeleted',
    );
    expect(await records('farm')).toEqual(
      expect.arrayContaining(
        farms.rows.map((row: Record<string, string | null>) => ({
          id: sfId('farm__c', String(row.id)),
          name: row.name,
          farm_type: String(row.farm_type__c).toLowerCase().replaceAll(' ', '_'),
          zone: row.zone__c,
          ...(row.owner_name__c === null ? {} : { owner: row.owner_name__c }),
        })),
      ),
    );
    const hens = await org.query(
      `SELECT id, name, coop__c, breed__c, to_char(date_of_birth__c, 'YYYY-MM-DD') AS dob, status__c FROM salesforce.hen__c WHERE NOT isdeleted`,
    );
    expect(await records('hen')).toEqual(
      expect.arrayContaining(
        hens.rows.map((row: Record<string, string>) => ({
          id: sfId('hen__c', String(row.id)),
          name: row.name,
          coop_id: sfId('coop__c', String(row.coop__c)),
          breed: row.breed__c,
          dob: row.dob,
          status: String(row.status__c).toLowerCase(),
        })),
      ),
    );
    const laid = await org.query(
      'SELECT coalesce(sum(egg_count__c), 0)::int AS eggs FROM salesforce.lay_report__c WHERE NOT isdeleted',
    );
    const reports = await records('lay_report');
    expect(reports.reduce((sum, report) => sum + Number(report.eggs), 0)).toBe(laid.rows[0].eggs);
    expect(Object.keys(reports[0] ?? {}).sort()).toEqual(
      ['coop_id', 'eggs', 'farm_id', 'hen_id', 'id', 'quality', 'timestamp'].filter(
        (field) => field !== 'quality' || reports[0]?.quality !== undefined,
      ),
    );

    // Each recycled record was deleted in the clean API, or (parked, never applied) had nothing to delete.
    const metrics = await sync.registry.metrics();
    const total = (pattern: RegExp) =>
      [...metrics.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect(
      total(/eggmesh_legacy_applied_total\{source="salesforce",entity="[a-z_]+",op="delete"\} (\d+)/g) +
        total(/eggmesh_legacy_ignored_total\{source="salesforce",reason="delete_unknown"\} (\d+)/g),
    ).toBe(simulator.counts.soft_delete);
    expect(sync.status()).toMatchObject({ parked: 0, deadLettered: 0 });

    // The projector folds the clean event log; each container's inventory totals equal the sums over
    // the org's live movements. (current_eggs is clamped at 0 step by step in arrival order, so it has
    // no order-free recomputation; the totals have.)
    const projections = openProjectionStore({ dir: cleanProjections });
    await new Projector(cleanPrimary.log, projections, 1_000_000).catchUp();
    await projections.close();
    const sum = (table: string, column: string) =>
      `(SELECT coalesce(sum(m.egg_count__c), 0) FROM salesforce.${table} m WHERE m.${column} = c.id AND NOT m.isdeleted)::int`;
    const totals = await org.query(
      `SELECT c.id, ${sum('storage_deposit__c', 'container__c')} AS total_deposits,
        ${sum('storage_withdrawal__c', 'container__c')} AS total_withdrawals,
        ${sum('container_transfer__c', 'dest_container__c')} AS total_transfers_in,
        ${sum('container_transfer__c', 'source_container__c')} AS total_transfers_out,
        ${sum('consumption_report__c', 'container__c')} AS total_consumed
       FROM salesforce.storage_container__c c WHERE NOT c.isdeleted`,
    );
    expect(totals.rows.length).toBeGreaterThan(0);
    const inventory = async (container: string) => {
      const response = await fetch(`${cleanUrl}/container_inventory/api/${container}`);
      return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
    };
    await until(async () => (await inventory(sfId('storage_container__c', totals.rows[0].id))) !== undefined);
    for (const { id: container, ...expectedTotals } of totals.rows as Record<string, string | number>[]) {
      expect(
        await inventory(sfId('storage_container__c', String(container))),
        String(container),
      ).toMatchObject(expectedTotals);
    }
    const projection = async (name: string, id: string) => {
      const response = await fetch(`${cleanUrl}/${name}/api/${id}`);
      return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
    };
    // Hen productivity: eggs of the hen's live reports, and the share graded Grade A, Double Yolk or not at all.
    const laying = await org.query(
      `SELECT h.id,
         coalesce(sum(r.egg_count__c), 0)::int AS total,
         coalesce(sum(r.egg_count__c) FILTER (WHERE r.quality__c IS NULL OR r.quality__c IN ('Grade A', 'Double Yolk')), 0)::int AS good
       FROM salesforce.hen__c h LEFT JOIN salesforce.lay_report__c r ON r.hen__c = h.id AND NOT r.isdeleted
       WHERE NOT h.isdeleted GROUP BY h.id`,
    );
    for (const row of laying.rows as { id: string; total: number; good: number }[]) {
      const served = (await projection('hen_productivity', sfId('hen__c', row.id))) ?? {
        total_eggs: 0,
        quality_rate: 0,
      };
      expect(served, row.id).toMatchObject({
        total_eggs: row.total,
        quality_rate: row.total > 0 ? Math.round(Math.min(1, row.good / row.total) * 1e4) / 1e4 : 0,
      });
    }
    // Farm output: the farm's type, its hens (through their coops) and those of them active.
    const output = await org.query(
      `SELECT f.id, f.farm_type__c, count(h.id)::int AS total_hens,
         (count(h.id) FILTER (WHERE h.status__c = 'Active'))::int AS active_hens
       FROM salesforce.farm__c f
       LEFT JOIN salesforce.coop__c c ON c.farm__c = f.id AND NOT c.isdeleted
       LEFT JOIN salesforce.hen__c h ON h.coop__c = c.id AND NOT h.isdeleted
       WHERE NOT f.isdeleted GROUP BY f.id, f.farm_type__c`,
    );
    for (const row of output.rows as Record<string, string | number>[]) {
      expect(await projection('farm_output', sfId('farm__c', String(row.id))), String(row.id)).toMatchObject({
        farm_type: String(row.farm_type__c).toLowerCase().replaceAll(' ', '_'),
        total_hens: row.total_hens,
        active_hens: row.active_hens,
      });
    }

    // The layer as a service for EGGMESH_LEGACY_SOURCE=salesforce, on a consumer group of its own:
    // it replays every change and ends with the same clean records.
    const repo = fileURLToPath(new URL('../../../', import.meta.url));
    execFileSync(
      process.execPath,
      [join(repo, 'node_modules/typescript/bin/tsc'), '-b', 'services/legacy-sync'],
      { cwd: repo, stdio: 'pipe', timeout: 170_000 },
    );
    const port = await freePort();
    const child = spawn(process.execPath, [join(repo, 'services/legacy-sync/dist/main.js')], {
      env: {
        ...process.env,
        EGGMESH_KAFKA_BROKERS: brokers,
        EGGMESH_LEGACY_SOURCE: 'salesforce',
        EGGMESH_LEGACY_TOPIC_PREFIX: orgPrefix,
        EGGMESH_DATA_DIR: join(dir, 'salesforce-service'),
        EGGMESH_WRITE_API_URL: cleanUrl,
        LEGACY_SYNC_PORT: String(port),
        EGGMESH_LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await untilCommitted(salesforceMapping, orgPrefix);
    const ready = (await (await fetch(`http://127.0.0.1:${port}/ready`)).json()) as Record<string, unknown>;
    expect(ready).toMatchObject({ status: 'ready', parked: 0, deadLettered: 0 });
    expect(Number(ready.applied)).toBeGreaterThan(0);
    for (const [entity] of tables) expect(await ids(entity), entity).toEqual(expected.get(entity));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await org.end();
  }, 900_000);
});
