import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
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
import { ChangeSignal } from './change-signal.js';
import { openDatabase, type SqliteDatabase, type Synchronous } from './database.js';
import { addMissingColumns, tableNames, VersionTables, VersionTablesReader } from './version-tables.js';

/** A trial write (see ping()) spans several pages, so that it needs room the database may not have. */
const TRIAL_WRITE_BYTES = 64 * 1024;
/** Less free space than this in the database's file system counts as full. */
const MIN_FREE_BYTES = 1024 * 1024;
/** Thrown to roll a trial write back. */
const ROLLBACK = Symbol('rollback');

/** The entities the primary holds: everything clients write (projections live in the projection store). */
export const primaryEntities: readonly EntityName[] = entityNames.filter(
  (e) => entities[e].kind !== 'projection',
);

/**
 * The log refers to version rows instead of copying payloads: `version` is the `seq` of the version
 * the change wrote (a tombstone for a delete), `previous_version` the one it replaced (null for a
 * create). Each payload is stored once, in `<entity>_versions`.
 */
const LOG_DDL = `
CREATE TABLE IF NOT EXISTS event_log (
  position INTEGER PRIMARY KEY,
  entity TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  op TEXT NOT NULL,
  version INTEGER NOT NULL,
  previous_version INTEGER,
  created_at INTEGER NOT NULL
);`;

/** `PRAGMA user_version` of the current primary layout (0: the layout that copied payloads three times). */
export const PRIMARY_LAYOUT_VERSION = 2;

/** One statement reading log entries with their payloads resolved from the version tables. */
function readLogSql(): string {
  const payloadOf = (column: string) =>
    `CASE l.entity ${primaryEntities
      .map((e) => `WHEN '${e}' THEN (SELECT payload FROM ${tableNames(e).versions} WHERE seq = l.${column})`)
      .join(' ')} END`;
  return `SELECT l.position, l.entity, l.entity_id, l.op, ${payloadOf('version')} AS payload,
    ${payloadOf('previous_version')} AS previous, l.created_at
    FROM event_log l WHERE l.position > ? ORDER BY l.position LIMIT CAST(? AS INTEGER)`;
}

const hasColumn = (db: SqliteDatabase, table: string, column: string): boolean =>
  (db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[]).includes(column);

/**
 * Brings a primary file to the current layout, or says why it cannot. A file of the first layout
 * (payload copies in `event_log` and `<entity>_current`) is migrated in one transaction when opened
 * for writing; opened read-only it is refused until the write-api has migrated it.
 */
function prepareLayout(db: SqliteDatabase, file: string, readonly: boolean): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > PRIMARY_LAYOUT_VERSION) {
    throw new StoreError(
      storeErrorCodes.UNAVAILABLE,
      `${file} has layout ${version}, newer than this eggmesh understands (${PRIMARY_LAYOUT_VERSION}); upgrade eggmesh`,
    );
  }
  const legacy = version < PRIMARY_LAYOUT_VERSION && hasColumn(db, 'event_log', 'payload');
  if (readonly) {
    if (legacy) {
      throw new StoreError(
        storeErrorCodes.UNAVAILABLE,
        `${file} has the old storage layout; start the write-api once (it migrates the file) and retry`,
      );
    }
    return;
  }
  db.transaction(() => {
    if (legacy) migrateFromCopies(db);
    addMissingColumns(db, primaryEntities, 'referenced');
    db.exec(VersionTables.ddl(primaryEntities, 'referenced') + LOG_DDL);
    db.pragma(`user_version = ${PRIMARY_LAYOUT_VERSION}`);
  }).immediate();
}

/** Layout 0 → 2: the log and the current rows point at version rows; the payload copies go. */
function migrateFromCopies(db: SqliteDatabase): void {
  const seqOf = (where: string) =>
    `CASE l.entity ${primaryEntities
      .map(
        (e) =>
          `WHEN '${e}' THEN (SELECT seq FROM ${tableNames(e).versions} v WHERE v.id = l.entity_id AND ${where})`,
      )
      .join(' ')} END`;
  db.exec(`ALTER TABLE event_log RENAME TO event_log_v0;${LOG_DDL}
    INSERT INTO event_log (position, entity, entity_id, op, version, previous_version, created_at)
    SELECT l.position, l.entity, l.entity_id, l.op, ${seqOf('v.created_at = l.created_at')},
      CASE WHEN l.op = 'create' THEN NULL ELSE ${seqOf('v.created_at < l.created_at ORDER BY v.created_at DESC LIMIT 1')} END,
      l.created_at
    FROM event_log_v0 l;
    DROP TABLE event_log_v0;`);
  for (const entity of primaryEntities) {
    const { versions, current } = tableNames(entity);
    db.exec(`DROP TABLE IF EXISTS ${current};`);
    // The DDL that follows recreates the table in the referenced layout; fill it from the versions.
    db.exec(VersionTables.ddl([entity], 'referenced'));
    const fields = db
      .prepare(`SELECT name FROM pragma_table_info('${entity}_current')`)
      .pluck()
      .all()
      .filter((c) => !['seq', 'id', 'created_at', 'version'].includes(c as string)) as string[];
    const cols = fields.map((f) => `, "${f}"`).join('');
    db.exec(`INSERT INTO ${current} (id, created_at, version${cols})
      SELECT v.id, v.created_at, v.seq${cols.replaceAll(', "', ', v."')} FROM ${versions} v
      WHERE v.deleted = 0 AND v.created_at = (SELECT max(w.created_at) FROM ${versions} w WHERE w.id = v.id)`);
  }
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

/** A row of `readLogSql()`: position, entity, entity_id, op, payload, previous, created_at (payloads as JSON text). */
const toEntry = (row: unknown[]): LogEntry => ({
  position: row[0] as number,
  entity: row[1] as EntityName,
  id: row[2] as string,
  op: row[3] as LogEntry['op'],
  payload: parse(row[4] as string | null),
  previous: parse(row[5] as string | null),
  createdAt: row[6] as number,
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
  /** One transaction for a group of commits, each in its own savepoint (see commit()). */
  private readonly groupTx: ((group: readonly (readonly WriteOperation[])[]) => GroupOutcome[]) | undefined;
  private pending: PendingCommit[] = [];
  private flushScheduled = false;
  private readonly stats = { transactions: 0, commits: 0 };
  /** Set by a commit that found no room (SQLITE_FULL), cleared by one that succeeds or a ping that finds room. */
  private full = false;

  constructor(options: PrimaryStoreOptions) {
    super();
    this.clock = options.clock ?? Date.now;
    this.db = openDatabase(options.file, options);
    prepareLayout(this.db, options.file, options.readonly === true);
    this.headStatement = this.db.prepare('SELECT coalesce(max(position), 0) FROM event_log').pluck();
    this.tables = new VersionTables(this.db, primaryEntities, !options.readonly, 'referenced');
    this.readLog = this.db.prepare(readLogSql()).raw(true);
    this.lastCreatedAt = this.db
      .prepare('SELECT created_at FROM event_log ORDER BY position DESC LIMIT 1')
      .pluck();
    if (!options.readonly) {
      this.appendLog = this.db.prepare(
        'INSERT INTO event_log (entity, entity_id, op, version, previous_version, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      );
      this.commitTx = this.db.transaction((operations) => this.apply(operations)).immediate;
      // Called inside groupTx, a better-sqlite3 transaction function runs in a savepoint: a commit that
      // throws rolls back alone and the group's other commits go on.
      const inSavepoint = this.db.transaction((operations: readonly WriteOperation[]) =>
        this.apply(operations),
      );
      this.groupTx = this.db.transaction((group: readonly (readonly WriteOperation[])[]) =>
        group.map((operations): GroupOutcome => {
          try {
            return { result: inSavepoint(operations) };
          } catch (error) {
            return { error };
          }
        }),
      ).immediate;
    }
    this.file = options.file;
    this.log = {
      read: async (after, limit) => this.readLogSync(after, limit),
      head: async () => this.headSync(),
      waitBeyond: (after, timeoutMs, signal) => this.waitBeyond(after, timeoutMs, signal),
      acknowledge: async () => undefined,
      close: async () => undefined,
    };
  }

  /** The database file. */
  readonly file: string;
  private changes: ChangeSignal | undefined;

  /**
   * Sleeps until the head passes `after`: woken by the file watch on the primary's directory (a
   * commit by any process touches `<file>-wal`), re-checking at least every `RECHECK_MS` in case the
   * file system sends no events.
   */
  private async waitBeyond(after: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    this.changes ??= new ChangeSignal([this.file]);
    for (;;) {
      const seen = this.changes.version;
      if (!this.db.open) return false;
      if (this.headSync() > after) return true;
      const left = deadline - performance.now();
      if (signal?.aborted || left <= 0) return false;
      await this.changes.next(seen, Math.min(left, RECHECK_MS), signal);
    }
  }

  /** Synchronous head, for callers that poll. */
  headSync(): number {
    return this.headStatement.get() as number;
  }

  readLogSync(after: number, limit: number): LogEntry[] {
    return (this.readLog.all(after, limit) as unknown[][]).map(toEntry);
  }

  /**
   * Group commit: the commits called while the event loop is busy (the requests of one poll phase) are
   * applied in one SQLite transaction, each in its own savepoint, and each promise settles once that
   * transaction has committed: every acknowledged write is durable as before (WAL; `synchronous` as
   * configured), and a commit that fails rolls back alone. A commit alone is applied at once (in the
   * check phase of the same loop turn), so nobody waits for company. What is saved is SQLite's per
   * transaction work: one BEGIN/COMMIT and one WAL write of the shared pages (log tail, index leaves)
   * for the whole group.
   */
  commit(operations: readonly WriteOperation[]): Promise<CommitResult> {
    if (!this.commitTx) {
      return Promise.reject(new StoreError(storeErrorCodes.READ_ONLY, 'this store was opened read-only'));
    }
    return new Promise<CommitResult>((resolve, reject) => {
      this.pending.push({ operations, resolve, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    });
  }

  /** Commits every pending commit now (one transaction). */
  private flush(): void {
    this.flushScheduled = false;
    const group = this.pending;
    this.pending = [];
    if (group.length === 0) return;
    if (!this.db.open) {
      const closed = new StoreError(storeErrorCodes.UNAVAILABLE, 'the store is closed');
      for (const commit of group) commit.reject(closed);
      return;
    }
    this.stats.transactions += 1;
    this.stats.commits += group.length;
    this.applyGroup(group);
  }

  /** The group in one transaction (a single commit in its own), each promise settled with its outcome. */
  private applyGroup(group: readonly PendingCommit[]): void {
    if (group.length === 1) {
      const only = group[0]!;
      try {
        only.resolve(this.committed(this.commitSyncUncounted(only.operations)));
      } catch (error) {
        only.reject(this.failed(error));
      }
      return;
    }
    let outcomes: GroupOutcome[];
    try {
      outcomes = this.groupTx!(group.map((commit) => commit.operations));
    } catch (error) {
      // The transaction itself failed (BEGIN or COMMIT): nothing of the group was written.
      const reason = this.failed(error);
      for (const commit of group) commit.reject(reason);
      return;
    }
    outcomes.forEach((outcome, i) => {
      const commit = group[i]!;
      if ('result' in outcome) commit.resolve(this.committed(outcome.result));
      else commit.reject(this.failed(outcome.error));
    });
  }

  /** Transactions and commits since the store opened: commits ÷ transactions is the mean group size. */
  groupStats(): { transactions: number; commits: number } {
    return { ...this.stats };
  }

  /** One commit in its own transaction, at once (callers that need no grouping: tools, tests). */
  commitSync(operations: readonly WriteOperation[]): CommitResult {
    if (!this.commitTx) throw new StoreError(storeErrorCodes.READ_ONLY, 'this store was opened read-only');
    this.flush();
    this.stats.transactions += 1;
    this.stats.commits += 1;
    return this.commitSyncUncounted(operations);
  }

  private commitSyncUncounted(operations: readonly WriteOperation[]): CommitResult {
    if (operations.length === 0) return { records: [], position: this.headSync() };
    return this.commitTx!(operations);
  }

  private apply(operations: readonly WriteOperation[]): CommitResult {
    if (operations.length === 0) return { records: [], position: this.headSync() };
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
      const version = this.tables.write(entity, id, createdAt, payload, operation.op !== 'delete');
      const previous = live ? newest.payload : null;
      const info = this.appendLog!.run(
        entity,
        id,
        operation.op,
        version,
        live ? newest.seq : null,
        createdAt,
      );
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

  private committed(result: CommitResult): CommitResult {
    this.full = false;
    return result;
  }

  /** SQLITE_FULL (no room in the file system, or the database at max_page_count) as the port's STORE_FULL. */
  private failed(error: unknown): unknown {
    if ((error as { code?: unknown } | null)?.code !== 'SQLITE_FULL') return error;
    this.full = true;
    return new StoreError(storeErrorCodes.FULL, 'the database has no room to write (disk full)', {
      cause: error,
    });
  }

  /**
   * Fails with STORE_FULL while the last commit found no room and a trial write still finds none: a
   * row large enough to need new pages, written in a transaction that is rolled back (nothing stays).
   */
  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
    if (!this.full || !this.appendLog) return;
    // The trial below is rolled back before SQLite writes its pages, so it cannot see a full file system.
    const free = statfsSync(dirname(this.file));
    if (free.bavail * free.bsize < MIN_FREE_BYTES) {
      throw new StoreError(storeErrorCodes.FULL, 'the database has no room to write (disk full)');
    }
    const appendLog = this.appendLog;
    const trial = this.db.transaction(() => {
      appendLog.run('x'.repeat(TRIAL_WRITE_BYTES), '', 'create', 0, null, 0);
      throw ROLLBACK;
    });
    try {
      trial.immediate();
    } catch (error) {
      if (error !== ROLLBACK) throw this.failed(error);
    }
    this.full = false;
  }

  async close(): Promise<void> {
    // Commits already asked for are written (and acknowledged) before the file closes.
    if (this.db.open) this.flush();
    this.changes?.close();
    // The last connection to close checkpoints the WAL into the file and removes it (SQLite's own).
    if (this.db.open) this.db.close();
  }
}

interface PendingCommit {
  readonly operations: readonly WriteOperation[];
  resolve(result: CommitResult): void;
  reject(error: unknown): void;
}

type GroupOutcome = { readonly result: CommitResult } | { readonly error: unknown };

/** The longest a log waiter sleeps without looking at the head (a net for file systems without events). */
const RECHECK_MS = 1000;

export function openPrimaryStore(options: PrimaryStoreOptions): SqlitePrimaryStore {
  return new SqlitePrimaryStore(options);
}
