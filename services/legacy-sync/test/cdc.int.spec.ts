import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../../infra/connect/server.mjs';
import { start as startConnect } from '../../../infra/connect/server.mjs';
import type { RunningPostgres } from '../../../infra/postgres/server.mjs';
import { start as startPostgres } from '../../../infra/postgres/server.mjs';
import { sharedKafkaBrokers } from '../../../infra/test/shared-servers.js';
import {
  applySchema,
  changeTopic,
  connectorConfig,
  putConnector,
  restartConnector,
  waitRunning,
} from '../src/index.js';

// Slice of the distributed tier below the layer: the project's PostgreSQL (wal_level=logical) holds
// the SAP schema, the project's Connect worker runs Debezium on it, and every committed row change
// lands on its table's topic, once, across a SIGKILL of the worker.
describe('change data capture from the SAP tables (PostgreSQL → Debezium → Kafka)', () => {
  let postgres: RunningPostgres;
  let connect: RunningWorker | undefined;
  let brokers: string;
  const prefix = `cdc${Date.now().toString(36)}`;

  beforeAll(async () => {
    [postgres, brokers] = await Promise.all([startPostgres(), sharedKafkaBrokers()]);
    const admin = new pg.Client({ connectionString: postgres.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE legacy');
    await admin.end();
  }, 300_000);

  afterAll(async () => {
    await connect?.stop();
    await postgres?.stop();
  });

  const farmRow = (werks: string, name: string) =>
    `INSERT INTO sap.zfarm_mstr VALUES ('100', '${werks}', '1000', '${name}', 'M', 'NORTH', 'HUBER', 'JSMITH', '20250301', '081500', NULL, NULL, NULL)`;

  it('streams inserts, updates and deletes of a table to its topic, and resumes after a SIGKILL without re-reading', async () => {
    const db = new pg.Client({ connectionString: postgres.url('legacy') });
    db.on('error', () => {});
    await db.connect();
    await applySchema(db, 'sap');
    await db.query(farmRow('1000', 'Sonnenhof'));

    const group = `${prefix}-connect`;
    connect = await startConnect({ brokers, group });
    const name = `${prefix}-sap`;
    const config = connectorConfig(
      { host: postgres.host, port: postgres.port, user: postgres.user, database: 'legacy' },
      'sap',
      prefix,
    );
    await putConnector(connect.url, name, config);
    await waitRunning(connect.url, name);
    await db.query(
      `UPDATE sap.zfarm_mstr SET farm_nm = 'Sonnenhof II' WHERE mandt = '100' AND werks = '1000'`,
    );

    const kafka = new Kafka({ brokers: [brokers], logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `${prefix}-reader` });
    const seen: {
      key: unknown;
      value: { op: string; before: unknown; after: Record<string, unknown> | null } | null;
    }[] = [];
    await consumer.connect();
    const topic = changeTopic(prefix, 'sap', 'ZFARM_MSTR');
    // The topic appears when Debezium writes its first change (Connect creates it).
    const admin = kafka.admin();
    await admin.connect();
    for (let i = 0; !(await admin.listTopics()).includes(topic) && i < 600; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await admin.disconnect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push({
          key: message.key ? JSON.parse(message.key.toString()) : null,
          value: message.value ? JSON.parse(message.value.toString()) : null,
        });
      },
    });
    const waitFor = async (count: number) => {
      for (let i = 0; seen.length < count && i < 600; i++) await new Promise((r) => setTimeout(r, 200));
    };
    await waitFor(2);
    expect(seen.map((m) => m.value?.op)).toEqual(['r', 'u']);
    expect(seen[0]?.key).toEqual({ mandt: '100', werks: '1000' });
    expect(seen[1]?.value?.after?.farm_nm).toBe('Sonnenhof II');

    // Once the worker has committed the update's source offset (it flushes every second), a crash of
    // the worker loses nothing: the changes made while it is down arrive after the restart, once.
    const offsets = kafka.consumer({ groupId: `${prefix}-offsets-reader` });
    const committed: Record<string, unknown>[] = [];
    await offsets.connect();
    await offsets.subscribe({ topic: `${group}-offsets`, fromBeginning: true });
    await offsets.run({
      eachMessage: async ({ message }) => {
        if (message.value) committed.push(JSON.parse(message.value.toString()));
      },
    });
    for (let i = 0; !committed.some((offset) => offset.messageType === 'UPDATE') && i < 600; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await offsets.disconnect();
    await connect.kill();
    await db.query(farmRow('2000', 'Birkenhof'));
    await db.query(`DELETE FROM sap.zfarm_mstr WHERE mandt = '100' AND werks = '1000'`);
    connect = await startConnect({ brokers, group });
    await waitRunning(connect.url, name);
    await waitFor(5);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(seen.map((m) => m.value?.op ?? 'tombstone')).toEqual(['r', 'u', 'c', 'd', 'tombstone']);
    expect(seen[3]?.value?.before).toMatchObject({ mandt: '100', werks: '1000' });
    expect(seen[4]?.key).toEqual({ mandt: '100', werks: '1000' });

    // A restart through Connect's REST API (connector and tasks) resumes from the committed offset too:
    // the next change arrives, and nothing before it again.
    await restartConnector(connect.url, name);
    await waitRunning(connect.url, name);
    await db.query(farmRow('3000', 'Lindenhof'));
    await waitFor(6);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(seen.map((m) => m.value?.op ?? 'tombstone')).toEqual(['r', 'u', 'c', 'd', 'tombstone', 'c']);
    expect(seen[5]?.value?.after).toMatchObject({ werks: '3000', farm_nm: 'Lindenhof' });
    await consumer.disconnect();
    await db.end();
  }, 900_000);
});
