import pg from 'pg';
import { connectorConfig, type LegacyDatabase, putConnector, waitRunning } from './connect.js';
import { salesforceMapping } from './salesforce.js';
import { sapMapping } from './sap.js';
import type { Source } from './sources.js';

export interface CaptureOptions {
  /** Kafka Connect's REST API. */
  readonly connectUrl: string;
  /** The legacy database as Connect reaches it: `postgresql://user[:password]@host:port/database`. */
  readonly databaseUrl: string;
  readonly source: Source;
  readonly topicPrefix: string;
  /** How long to wait for the source's tables and then for the connector to run. */
  readonly timeoutMs?: number;
}

/** The connector's name on the Connect cluster: one per prefix and source. */
export const captureName = (topicPrefix: string, source: Source) => `eggmesh-${topicPrefix}-${source}`;

/** The parts of a PostgreSQL URL Debezium's connector takes one by one. */
export function databaseOf(url: string): LegacyDatabase {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username || 'postgres'),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres',
  };
}

const firstTable = { sap: sapMapping.tables[0]!.table, salesforce: salesforceMapping.tables[0]!.table };

/**
 * Waits until the legacy database holds the source's tables (the connector's publication is created
 * for the tables that exist when it first starts), then registers the source's Debezium connector
 * (idempotent: PUT of its config) and waits until it and its task run. Answers the connector's name.
 */
export async function registerCapture(options: CaptureOptions): Promise<string> {
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  const table = `${options.source}.${firstTable[options.source]}`;
  for (;;) {
    const db = new pg.Client({ connectionString: options.databaseUrl });
    db.on('error', () => {});
    try {
      await db.connect();
      const found = await db.query('SELECT to_regclass($1) IS NOT NULL AS present', [table]);
      if (found.rows[0]?.present) break;
    } catch {
      // Not accepting connections yet, or the database is still being created.
    } finally {
      await db.end().catch(() => undefined);
    }
    if (Date.now() > deadline) {
      throw new Error(`eggmesh-legacy-sync: no table ${table} in ${options.databaseUrl}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const name = captureName(options.topicPrefix, options.source);
  const config = connectorConfig(databaseOf(options.databaseUrl), options.source, options.topicPrefix);
  // A worker still starting refuses connections or answers 5xx until it has joined its group.
  for (;;) {
    try {
      await putConnector(options.connectUrl, name, config);
      break;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  await waitRunning(options.connectUrl, name, Math.max(1, deadline - Date.now()));
  return name;
}
