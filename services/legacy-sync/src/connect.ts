import type { Source } from './sources.js';

/** Where Debezium reads a legacy database. */
export interface LegacyDatabase {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password?: string;
  readonly database: string;
}

/**
 * The Debezium PostgreSQL connector's configuration for one source: pgoutput (no server plugin to
 * install), a replication slot and publication of its own, one topic per table under `prefix`
 * (created by Connect with one replica), an initial snapshot, then the WAL. Deletes carry the key
 * (the primary key is the replica identity) and are followed by a tombstone.
 */
export function connectorConfig(db: LegacyDatabase, source: Source, prefix: string): Record<string, string> {
  const slot = `eggmesh_${prefix}_${source}`.replace(/[^a-z0-9_]/g, '_');
  return {
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'tasks.max': '1',
    'plugin.name': 'pgoutput',
    'database.hostname': db.host,
    'database.port': String(db.port),
    'database.user': db.user,
    'database.password': db.password ?? '',
    'database.dbname': db.database,
    'topic.prefix': prefix,
    'schema.include.list': source,
    'slot.name': slot,
    'publication.name': slot,
    'publication.autocreate.mode': 'filtered',
    'snapshot.mode': 'initial',
    'tombstones.on.delete': 'true',
    // NUMERIC as a decimal string (exact), dates as days since the epoch, timestamps as ISO strings.
    'decimal.handling.mode': 'string',
    'time.precision.mode': 'connect',
    'topic.creation.default.replication.factor': '1',
    'topic.creation.default.partitions': '1',
    'heartbeat.interval.ms': '0',
  };
}

export interface ConnectorStatus {
  readonly connector: { readonly state: string; readonly trace?: string };
  readonly tasks: readonly { readonly id: number; readonly state: string; readonly trace?: string }[];
}

async function call(url: string, init?: RequestInit): Promise<Response> {
  const response = await fetch(url, {
    ...init,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
  });
  return response;
}

/** Creates or updates a connector (PUT /connectors/<name>/config: idempotent). */
export async function putConnector(
  connect: string,
  name: string,
  config: Record<string, string>,
): Promise<void> {
  // A worker that just joined its group answers 409 while it rebalances: try again.
  for (let attempt = 0; ; attempt++) {
    const response = await call(`${connect}/connectors/${name}/config`, {
      method: 'PUT',
      body: JSON.stringify(config),
    });
    if (response.ok) return;
    const body = await response.text();
    if (response.status !== 409 || attempt > 120) {
      throw new Error(`eggmesh: Kafka Connect refused connector ${name} (${response.status}): ${body}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The connector's status, or undefined while the worker does not know it. */
export async function connectorStatus(connect: string, name: string): Promise<ConnectorStatus | undefined> {
  const response = await call(`${connect}/connectors/${name}/status`);
  if (response.status === 404) return undefined;
  if (!response.ok) throw new Error(`eggmesh: Kafka Connect status of ${name}: ${response.status}`);
  return (await response.json()) as ConnectorStatus;
}

/** True when the connector and every task of it run. */
export function isRunning(status: ConnectorStatus | undefined): boolean {
  return (
    status?.connector.state === 'RUNNING' &&
    status.tasks.length > 0 &&
    status.tasks.every((task) => task.state === 'RUNNING')
  );
}

/**
 * Waits until the connector and its tasks run; a FAILED task fails the wait with its trace (a wrong
 * database setting does not heal by waiting).
 */
export async function waitRunning(
  connect: string,
  name: string,
  timeoutMs = 180_000,
): Promise<ConnectorStatus> {
  const deadline = Date.now() + timeoutMs;
  let last: ConnectorStatus | undefined;
  for (;;) {
    try {
      last = await connectorStatus(connect, name);
    } catch {
      last = undefined;
    }
    if (last && isRunning(last)) return last;
    const failed = last?.tasks.find((task) => task.state === 'FAILED');
    if (failed || last?.connector.state === 'FAILED') {
      throw new Error(`eggmesh: connector ${name} failed: ${failed?.trace ?? last?.connector.trace ?? ''}`);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `eggmesh: connector ${name} is not running after ${timeoutMs} ms: ${JSON.stringify(last)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Restarts the connector and its tasks (POST /connectors/<name>/restart?includeTasks=true). */
export async function restartConnector(connect: string, name: string): Promise<void> {
  const response = await call(`${connect}/connectors/${name}/restart?includeTasks=true`, { method: 'POST' });
  if (!response.ok && response.status !== 202 && response.status !== 204) {
    throw new Error(`eggmesh: Kafka Connect restart of ${name}: ${response.status} ${await response.text()}`);
  }
}
