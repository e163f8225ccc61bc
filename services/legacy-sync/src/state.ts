import Database from 'better-sqlite3';

export interface ParkedRecord {
  readonly id: string;
  readonly entity: string;
  readonly table: string;
  /** The legacy row, so a mapping fix or a late parent re-maps it from the source. */
  readonly row: Record<string, unknown>;
  readonly client: string;
  readonly waitingOn: readonly string[];
  readonly since: number;
  readonly legacyMs: number;
}

export interface DeadLetter {
  readonly table: string;
  readonly key: string;
  readonly client: string;
  readonly reason: string;
  readonly row: Record<string, unknown>;
  readonly since: number;
}

/**
 * The layer's own durable state, one SQLite file: which clean ids it has applied (with their clean
 * record, for fields children inherit), the children parked until their parents land, and the rows
 * that dead-lettered (retried at start, so a fixed mapping applies them). Each Kafka offset is
 * committed only after its record is applied, parked or dead-lettered here.
 */
export class SyncState {
  readonly #db: Database.Database;

  constructor(file: string) {
    this.#db = new Database(file);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS applied (id TEXT PRIMARY KEY, entity TEXT NOT NULL, record TEXT NOT NULL, legacy_key TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS parked (id TEXT PRIMARY KEY, entity TEXT NOT NULL, tbl TEXT NOT NULL, client TEXT NOT NULL,
        row TEXT NOT NULL, since INTEGER NOT NULL, legacy_ms INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS waits (child TEXT NOT NULL, parent TEXT NOT NULL, PRIMARY KEY (child, parent));
      CREATE INDEX IF NOT EXISTS waits_parent ON waits (parent);
      CREATE TABLE IF NOT EXISTS dead (tbl TEXT NOT NULL, key TEXT NOT NULL, client TEXT NOT NULL, reason TEXT NOT NULL,
        row TEXT NOT NULL, since INTEGER NOT NULL, PRIMARY KEY (tbl, client, key));
    `);
  }

  applied(id: string): Record<string, unknown> | undefined {
    const row = this.#db.prepare('SELECT record FROM applied WHERE id = ?').get(id) as
      | { record: string }
      | undefined;
    return row ? (JSON.parse(row.record) as Record<string, unknown>) : undefined;
  }

  /** The legacy key a clean id came from (`source/client/table/key`): the way back. */
  legacyKey(id: string): string | undefined {
    const row = this.#db.prepare('SELECT legacy_key FROM applied WHERE id = ?').get(id) as
      | { legacy_key: string }
      | undefined;
    return row?.legacy_key;
  }

  markApplied(id: string, entity: string, record: Record<string, unknown>, legacyKey: string): void {
    this.#db
      .prepare('INSERT OR REPLACE INTO applied (id, entity, record, legacy_key) VALUES (?, ?, ?, ?)')
      .run(id, entity, JSON.stringify(record), legacyKey);
  }

  markDeleted(id: string): void {
    this.#db.prepare('DELETE FROM applied WHERE id = ?').run(id);
  }

  park(record: ParkedRecord): void {
    this.#db.transaction(() => {
      this.unpark(record.id);
      this.#db
        .prepare(
          'INSERT INTO parked (id, entity, tbl, client, row, since, legacy_ms) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          record.id,
          record.entity,
          record.table,
          record.client,
          JSON.stringify(record.row),
          record.since,
          record.legacyMs,
        );
      const wait = this.#db.prepare('INSERT OR IGNORE INTO waits (child, parent) VALUES (?, ?)');
      for (const parent of record.waitingOn) wait.run(record.id, parent);
    })();
  }

  unpark(id: string): void {
    this.#db.prepare('DELETE FROM parked WHERE id = ?').run(id);
    this.#db.prepare('DELETE FROM waits WHERE child = ?').run(id);
  }

  /** Parked children that wait on `parent`. */
  waitingOn(parent: string): ParkedRecord[] {
    const rows = this.#db
      .prepare('SELECT p.* FROM parked p JOIN waits w ON w.child = p.id WHERE w.parent = ?')
      .all(parent) as {
      id: string;
      entity: string;
      tbl: string;
      client: string;
      row: string;
      since: number;
      legacy_ms: number;
    }[];
    return rows.map((row) => ({
      id: row.id,
      entity: row.entity,
      table: row.tbl,
      client: row.client,
      row: JSON.parse(row.row) as Record<string, unknown>,
      waitingOn: [parent],
      since: row.since,
      legacyMs: row.legacy_ms,
    }));
  }

  /** Parked records older than `before` (their parent did not arrive in time). */
  parkedBefore(before: number): ParkedRecord[] {
    const rows = this.#db.prepare('SELECT * FROM parked WHERE since < ? ORDER BY since').all(before) as {
      id: string;
      entity: string;
      tbl: string;
      client: string;
      row: string;
      since: number;
      legacy_ms: number;
    }[];
    return rows.map((row) => ({
      id: row.id,
      entity: row.entity,
      table: row.tbl,
      client: row.client,
      row: JSON.parse(row.row) as Record<string, unknown>,
      waitingOn: (
        this.#db.prepare('SELECT parent FROM waits WHERE child = ?').all(row.id) as { parent: string }[]
      ).map((wait) => wait.parent),
      since: row.since,
      legacyMs: row.legacy_ms,
    }));
  }

  parkedCount(): number {
    return (this.#db.prepare('SELECT count(*) AS n FROM parked').get() as { n: number }).n;
  }

  deadLetter(letter: DeadLetter): void {
    this.#db
      .prepare('INSERT OR REPLACE INTO dead (tbl, key, client, reason, row, since) VALUES (?, ?, ?, ?, ?, ?)')
      .run(letter.table, letter.key, letter.client, letter.reason, JSON.stringify(letter.row), letter.since);
  }

  clearDead(table: string, client: string, key: string): void {
    this.#db.prepare('DELETE FROM dead WHERE tbl = ? AND client = ? AND key = ?').run(table, client, key);
  }

  deadLetters(): DeadLetter[] {
    return (
      this.#db.prepare('SELECT * FROM dead ORDER BY since').all() as {
        tbl: string;
        key: string;
        client: string;
        reason: string;
        row: string;
        since: number;
      }[]
    ).map((row) => ({
      table: row.tbl,
      key: row.key,
      client: row.client,
      reason: row.reason,
      row: JSON.parse(row.row) as Record<string, unknown>,
      since: row.since,
    }));
  }

  close(): void {
    this.#db.close();
  }
}
