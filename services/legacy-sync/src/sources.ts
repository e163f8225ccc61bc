import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

/** The legacy systems of record the layer knows (one SQL schema and one mapping each). */
export const sources = ['sap', 'salesforce'] as const;
export type Source = (typeof sources)[number];

/** The SQL of a source's schema, kept with the PostgreSQL server script (infra/postgres/<source>.sql). */
export function schemaSql(source: Source): string {
  return readFileSync(
    fileURLToPath(new URL(`../../../infra/postgres/${source}.sql`, import.meta.url)),
    'utf8',
  );
}

/** Creates a source's tables (idempotent) in the database `client` is connected to. */
export async function applySchema(client: pg.ClientBase | pg.Pool, source: Source): Promise<void> {
  await client.query(schemaSql(source));
}

/** The Kafka topic Debezium writes a table's changes to: `<prefix>.<schema>.<table>`. */
export function changeTopic(prefix: string, source: Source, table: string): string {
  return `${prefix}.${source}.${table.toLowerCase()}`;
}
