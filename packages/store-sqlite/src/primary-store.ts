import { type EntityName, entities, entityNames } from '@eggmesh/schema';
import {
  type CommitResult,
  type EventLog,
  type LogEntry,
  type PrimaryStore,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
  type WriteOperation,
} from '@eggmesh/store';
import type { Statement } from 'better-sqlite3';
import { openDatabase, type SqliteDatabase, type Synchronous } from './database.js';
import { VersionTables, VersionTablesReader } from './version-tables.js';

/** The entities the primary holds: everything clients write (projections live in the projection store). */
export const primaryEntities: readonly EntityName[] = entityNames.filter(
  (e) => entities[e].kind !== 'projection',
);

const LOG_DDL = `
CREATE TABLE IF NOT EXISTS event_log (
  position INTEGER PRIMARY KEY,
  entity TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  op TEXT NOT NULL,
  payload TEXT,
  previous TEXT,
  created_at INTEGER NOT NULL
);`;

interface LogRow {
  position: number;
  entity: string;
  entity_id: string;
  op: string;
  payload: string | null;
  previous: string | null;
  created_at: number;
}

export interface PrimaryStoreOptions {
  readonly file: string;
  readonly readonly?: boolean;
  readonly synchronous?: Synchronous;
  /** The wall clock (epoch ms); injected so tests control time. */
  readonly clock?: () => number;
}

const parse = (json: string | null): Record<string, unknown> | null =>
  json === null ? null : (JSON.parse(json) as Record<string, unknown>);

const toEntry = (row: LogRow): LogEntry => ({
  position: row.position,
  entity: row.entity as EntityName,
  id: row.entity_id,
  op: row.op as LogEntry['op'],
  payload: parse(row.payload),
  previous: parse(row.previous),
  createdAt: row.created_at,
});

/** The SQLite primary: versioned entity tables and the event log in one file, written in one transaction. */
export class SqlitePrimaryStore extends VersionTablesReader implements PrimaryStore {
  readonly db: SqliteDatabase;
  readonly log: EventLog;
  protected readonly tables: VersionTables;
  private readonly clock: () => number;
  private readonly readLog: Statement;
  private readonly headStatement: Statement;
  private readonly lastCreatedAt: Statement;
  private readonly appendLog: Statement | undefined;
  private readonly commitTx: ((operations: readonly WriteOperation[]) => CommitResult) | undefined;

  constructor(options: PrimaryStoreOptions) {
    super();
    this.clock = options.clock ?? Date.now;
    this.db = openDatabase(options.file, options);
    if (!options.readonly) this.db.exec(VersionTables.ddl(primaryEntities) + LOG_DDL);
    this.tables = new VersionTables(this.db, primaryEntities, !options.readonly);
    this.readLog = this.db.prepare('SELECT * FROM event_log WHERE position > ? ORDER BY position LIMIT ?');
    this.headStatement = this.db.prepare('SELECT coalesce(max(position), 0) FROM event_log').pluck();
    this.lastCreatedAt = this.db
      .prepare('SELECT created_at FROM event_log ORDER BY position DESC LIMIT 1')
      .pluck();
    if (!options.readonly) {
      this.appendLog = this.db.prepare(
        'INSERT INTO event_log (entity, entity_id, op, payload, previous, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      );
      this.commitTx = this.db.transaction((operations) => this.apply(operations)).immediate;
    }
    const headOf = () => this.headStatement.get() as number;
    this.log = {
      read: async (after, limit) => (this.readLog.all(after, limit) as LogRow[]).map(toEntry),
      head: async () => headOf(),
    };
  }

  /** Synchronous head, for callers that poll. */
  headSync(): number {
    return this.headStatement.get() as number;
  }

  readLogSync(after: number, limit: number): LogEntry[] {
    return (this.readLog.all(after, limit) as LogRow[]).map(toEntry);
  }

  async commit(operations: readonly WriteOperation[]): Promise<CommitResult> {
    return this.commitSync(operations);
  }

  commitSync(operations: readonly WriteOperation[]): CommitResult {
    if (!this.commitTx) throw new StoreError(storeErrorCodes.READ_ONLY, 'this store was opened read-only');
    if (operations.length === 0) return { records: [], position: this.headSync() };
    return this.commitTx(operations);
  }

  private apply(operations: readonly WriteOperation[]): CommitResult {
    // Versions take a time that never goes back in log order and is strictly newer than the id's last version.
    let last = (this.lastCreatedAt.get() as number | undefined) ?? 0;
    const records: StoredRecord[] = [];
    let position = 0;
    operations.forEach((operation, index) => {
      const { entity, id } = operation;
      // One index lookup: the id's newest version, live or a tombstone; its payload stays unparsed.
      const newest = this.tables.latest(entity, id);
      const live = newest !== undefined && !newest.deleted;
      if (operation.op === 'create' && live) {
        throw new StoreError(storeErrorCodes.ALREADY_EXISTS, `${entity} ${id} already exists`, {
          index,
          entity,
          id,
        });
      }
      if (operation.op !== 'create' && !live) {
        throw new StoreError(storeErrorCodes.NOT_FOUND, `${entity} ${id} does not exist`, {
          index,
          entity,
          id,
        });
      }
      const createdAt = Math.max(this.clock(), last, (newest?.created_at ?? -1) + 1);
      last = createdAt;
      const payload = operation.op === 'delete' ? null : JSON.stringify(operation.payload);
      this.tables.write(entity, id, createdAt, payload, operation.op !== 'delete');
      const previous = live ? newest.payload : null;
      const info = this.appendLog!.run(entity, id, operation.op, payload, previous, createdAt);
      position = Number(info.lastInsertRowid);
      records.push({
        id,
        createdAt,
        payload:
          operation.op === 'delete'
            ? (JSON.parse(previous ?? '{}') as Record<string, unknown>)
            : operation.payload,
      });
    });
    return { records, position };
  }

  /** Synchronous reads for hot paths in the same process. */
  get sync(): VersionTables {
    return this.tables;
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

export function openPrimaryStore(options: PrimaryStoreOptions): SqlitePrimaryStore {
  return new SqlitePrimaryStore(options);
}
