import { type EntityName, entities } from '@eggmesh/schema';
import {
  type EntityReader,
  type PageOptions,
  type ReadOptions,
  type RelationPageOptions,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
} from '@eggmesh/store';
import type { Statement } from 'better-sqlite3';
import { quote, type SqliteDatabase } from './database.js';

interface Row {
  id: string;
  created_at: number;
  payload: string;
}

interface VersionRow {
  seq: number;
  id: string;
  created_at: number;
  deleted: number;
  payload: string | null;
}

/** The id cursor start: every id sorts after the empty string. */
const FIRST = '';

/**
 * Fields that get a generated column and an index. A projection's key field always equals the
 * document id, so the id index serves it and it needs none of its own.
 */
function filterColumns(entity: EntityName): readonly string[] {
  const { indexedFields, projectionKey } = entities[entity];
  return indexedFields.filter((f) => f !== projectionKey);
}

/**
 * Where a current row's payload lives. `inline`: the current table holds a copy (projection
 * generations, where the copy buys the fastest reads). `referenced`: the current table points at
 * the version row (`version` = its `seq`) and keeps only the filtered fields, so a payload is
 * stored once (the primary, where clients may send large documents).
 */
export type CurrentLayout = 'inline' | 'referenced';

/** Table names of one entity: every version, and the newest live version of each id. */
export function tableNames(entity: EntityName) {
  return { versions: quote(`${entity}_versions`), current: quote(`${entity}_current`) };
}

/** DDL for an entity's tables; every filtered field is a generated column with an index. */
export function entityDdl(entity: EntityName, layout: CurrentLayout = 'inline'): string {
  const { versions, current } = tableNames(entity);
  const fields = filterColumns(entity);
  const generated = fields
    .map((f) => `, ${quote(f)} TEXT GENERATED ALWAYS AS (json_extract(payload, '$.${f}')) VIRTUAL`)
    .join('');
  const currentColumns =
    layout === 'inline'
      ? `payload TEXT NOT NULL${generated}`
      : `version INTEGER NOT NULL${fields.map((f) => `, ${quote(f)} TEXT`).join('')}`;
  const indexes = fields
    .map(
      (f) =>
        `CREATE INDEX IF NOT EXISTS ${quote(`${entity}_versions_${f}`)} ON ${versions} (${quote(f)}, id, created_at);\n` +
        `CREATE INDEX IF NOT EXISTS ${quote(`${entity}_current_${f}`)} ON ${current} (${quote(f)}, id);`,
    )
    .join('\n');
  return `
CREATE TABLE IF NOT EXISTS ${versions} (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL, created_at INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0,
  payload TEXT${generated}
);
CREATE UNIQUE INDEX IF NOT EXISTS ${quote(`${entity}_versions_id`)} ON ${versions} (id, created_at);
CREATE TABLE IF NOT EXISTS ${current} (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, ${currentColumns}
);
${indexes}`;
}

const toRecord = (row: Row): StoredRecord => ({
  id: row.id,
  createdAt: row.created_at,
  payload: JSON.parse(row.payload) as Record<string, unknown>,
});

interface FieldStatements {
  current: Statement;
  at: Statement;
  currentAll: Statement;
  atAll: Statement;
}

/** Prepared statements reading one entity's tables, current or `at` a time. */
class EntityTables {
  readonly getCurrent: Statement;
  readonly getAt: Statement;
  readonly latest: Statement;
  readonly listCurrent: Statement;
  readonly listAt: Statement;
  readonly insertVersion: Statement;
  readonly upsertCurrent: Statement;
  readonly deleteCurrent: Statement;
  private readonly byField = new Map<string, FieldStatements>();
  private readonly insertMany = new Map<number, Statement>();

  /** `SELECT … FROM` the current rows with their payloads, as `c.id, c.created_at, payload`. */
  private readonly currentFrom: string;

  constructor(
    private readonly db: SqliteDatabase,
    readonly entity: EntityName,
    private readonly writable: boolean,
    readonly layout: CurrentLayout,
  ) {
    const { versions, current } = tableNames(entity);
    const newestAt = `v.created_at = (SELECT max(w.created_at) FROM ${versions} w WHERE w.id = v.id AND w.created_at <= @at)`;
    this.currentFrom =
      layout === 'inline'
        ? `SELECT c.id, c.created_at, c.payload FROM ${current} c`
        : `SELECT c.id, c.created_at, p.payload FROM ${current} c JOIN ${versions} p ON p.seq = c.version`;
    this.getCurrent = db.prepare(`${this.currentFrom} WHERE c.id = ?`);
    this.getAt = db.prepare(
      `SELECT id, created_at, deleted, payload FROM ${versions} WHERE id = ? AND created_at <= ? ORDER BY created_at DESC LIMIT 1`,
    );
    this.latest = db.prepare(
      `SELECT seq, id, created_at, deleted, payload FROM ${versions} WHERE id = ? ORDER BY created_at DESC LIMIT 1`,
    );
    this.listCurrent = db.prepare(
      `${this.currentFrom} WHERE c.id > @after ORDER BY c.id LIMIT CAST(@limit AS INTEGER)`,
    );
    this.listAt = db.prepare(
      `SELECT v.id, v.created_at, v.payload FROM ${versions} v
       WHERE v.id > @after AND v.created_at <= @at AND v.deleted = 0 AND ${newestAt}
       ORDER BY v.id LIMIT CAST(@limit AS INTEGER)`,
    );
    if (writable) {
      this.insertVersion = db.prepare(
        `INSERT OR REPLACE INTO ${versions} (id, created_at, deleted, payload) VALUES (?, ?, ?, ?)`,
      );
      const fields = filterColumns(entity).map(quote);
      this.upsertCurrent =
        layout === 'inline'
          ? db.prepare(
              `INSERT INTO ${current} (id, created_at, payload) VALUES (?, ?, ?)
               ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, payload = excluded.payload`,
            )
          : // The filtered fields come from the version's generated columns: one source of truth.
            db.prepare(
              `INSERT INTO ${current} (id, created_at, version${fields.map((f) => `, ${f}`).join('')})
               SELECT id, created_at, seq${fields.map((f) => `, ${f}`).join('')} FROM ${versions} WHERE seq = ?
               ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, version = excluded.version${fields
                 .map((f) => `, ${f} = excluded.${f}`)
                 .join('')}`,
            );
      this.deleteCurrent = db.prepare(`DELETE FROM ${current} WHERE id = ?`);
    } else {
      const readOnly = () => {
        throw new StoreError(storeErrorCodes.READ_ONLY, 'this store was opened read-only');
      };
      const guard = new Proxy({} as Statement, { get: readOnly });
      this.insertVersion = guard;
      this.upsertCurrent = guard;
      this.deleteCurrent = guard;
    }
  }

  /** `INSERT OR REPLACE` of `rows` versions in one statement (writable tables only). */
  insertVersions(rows: number): Statement {
    let statement = this.insertMany.get(rows);
    if (!statement) {
      if (!this.writable) throw new StoreError(storeErrorCodes.READ_ONLY, 'this store was opened read-only');
      const { versions } = tableNames(this.entity);
      statement = this.db.prepare(
        `INSERT OR REPLACE INTO ${versions} (id, created_at, deleted, payload) VALUES ${Array(rows).fill('(?, ?, ?, ?)').join(', ')}`,
      );
      this.insertMany.set(rows, statement);
    }
    return statement;
  }

  field(field: string): FieldStatements {
    let statements = this.byField.get(field);
    if (statements) return statements;
    if (!entities[this.entity].indexedFields.includes(field)) {
      throw new StoreError(storeErrorCodes.UNKNOWN_FIELD, `${this.entity} has no indexed field ${field}`, {
        entity: this.entity,
      });
    }
    const { versions } = tableNames(this.entity);
    const col = quote(field);
    const newestAt = `v.created_at = (SELECT max(w.created_at) FROM ${versions} w WHERE w.id = v.id AND w.created_at <= @at)`;
    statements = {
      current: this.db.prepare(
        // CAST: a LIMIT bound straight from a JS number runs about 3× slower per call (measured).
        `${this.currentFrom} WHERE c.${col} = @value AND c.id > @after ORDER BY c.id LIMIT CAST(@limit AS INTEGER)`,
      ),
      at: this.db.prepare(
        `SELECT v.id, v.created_at, v.payload FROM ${versions} v
         WHERE v.${col} = @value AND v.id > @after AND v.created_at <= @at AND v.deleted = 0 AND ${newestAt}
         ORDER BY v.id LIMIT CAST(@limit AS INTEGER)`,
      ),
      currentAll: this.db.prepare(`${this.currentFrom} WHERE c.${col} = ? ORDER BY c.id`),
      atAll: this.db.prepare(
        `SELECT v.id, v.created_at, v.payload FROM ${versions} v
         WHERE v.${col} = @value AND v.created_at <= @at AND v.deleted = 0 AND ${newestAt}
         ORDER BY v.id`,
      ),
    };
    this.byField.set(field, statements);
    return statements;
  }
}

/**
 * Reads (and, when writable, writes) the versioned tables of a set of entities in one database.
 * Reads are synchronous; the async port wraps them.
 */
export class VersionTables {
  private readonly tables = new Map<EntityName, EntityTables>();

  constructor(
    readonly db: SqliteDatabase,
    readonly entityNames: readonly EntityName[],
    private readonly writable: boolean,
    readonly layout: CurrentLayout = 'inline',
  ) {}

  static ddl(entityNames: readonly EntityName[], layout: CurrentLayout = 'inline'): string {
    return entityNames.map((e) => entityDdl(e, layout)).join('\n');
  }

  of(entity: EntityName): EntityTables {
    let t = this.tables.get(entity);
    if (!t) {
      if (!this.entityNames.includes(entity)) {
        throw new StoreError(storeErrorCodes.NOT_FOUND, `this store does not hold ${entity}`, { entity });
      }
      t = new EntityTables(this.db, entity, this.writable, this.layout);
      this.tables.set(entity, t);
    }
    return t;
  }

  get(entity: EntityName, id: string, options?: ReadOptions): StoredRecord | null {
    const t = this.of(entity);
    if (options?.at === undefined) {
      const row = t.getCurrent.get(id) as Row | undefined;
      return row ? toRecord(row) : null;
    }
    const row = t.getAt.get(id, options.at) as VersionRow | undefined;
    return row && !row.deleted && row.payload !== null ? toRecord(row as Row) : null;
  }

  /** The newest version whether live or deleted (projector state lives on in tombstones). */
  latest(entity: EntityName, id: string): VersionRow | undefined {
    return this.of(entity).latest.get(id) as VersionRow | undefined;
  }

  getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions): StoredRecord[] {
    const out: StoredRecord[] = [];
    for (const id of new Set(ids)) {
      const record = this.get(entity, id, options);
      if (record) out.push(record);
    }
    return out;
  }

  findBy(entity: EntityName, field: string, value: string, options: PageOptions): StoredRecord[] {
    if (field === entities[entity].projectionKey) {
      if (options.limit < 1 || (options.after !== undefined && value <= options.after)) return [];
      const record = this.get(entity, value, options);
      return record ? [record] : [];
    }
    const s = this.of(entity).field(field);
    const params = { value, after: options.after ?? FIRST, limit: options.limit, at: options.at };
    const rows = (options.at === undefined ? s.current.all(params) : s.at.all(params)) as Row[];
    return rows.map(toRecord);
  }

  findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): StoredRecord[] {
    if (options?.limit !== undefined || options?.after !== undefined) {
      // Each value's page is one indexed range read (`findBy`'s statement, LIMIT in the SQL).
      const page = { at: options.at, limit: options.limit ?? Number.MAX_SAFE_INTEGER, after: options.after };
      return [...new Set(values)].flatMap((value) => this.findBy(entity, field, value, page));
    }
    if (field === entities[entity].projectionKey) return this.getMany(entity, values, options);
    const s = this.of(entity).field(field);
    const out: StoredRecord[] = [];
    for (const value of new Set(values)) {
      const rows = (
        options?.at === undefined ? s.currentAll.all(value) : s.atAll.all({ value, at: options.at })
      ) as Row[];
      for (const row of rows) out.push(toRecord(row));
    }
    return out;
  }

  list(entity: EntityName, options: PageOptions): StoredRecord[] {
    const t = this.of(entity);
    const params = { after: options.after ?? FIRST, limit: options.limit, at: options.at };
    const rows = (options.at === undefined ? t.listCurrent.all(params) : t.listAt.all(params)) as Row[];
    return rows.map(toRecord);
  }

  /** Appends a version, keeps the current table in step and returns the version's `seq`. */
  write(entity: EntityName, id: string, createdAt: number, payload: string | null, live: boolean): number {
    const seq = this.appendVersion(entity, id, createdAt, payload, live);
    const t = this.of(entity);
    if (!live || payload === null) t.deleteCurrent.run(id);
    else if (this.layout === 'referenced') t.upsertCurrent.run(seq);
    else t.upsertCurrent.run(id, createdAt, payload);
    return seq;
  }

  /** Appends a version (replacing one at the same time); leaves the current table alone. Returns its `seq`. */
  appendVersion(
    entity: EntityName,
    id: string,
    createdAt: number,
    payload: string | null,
    live: boolean,
  ): number {
    return Number(this.of(entity).insertVersion.run(id, createdAt, live ? 0 : 1, payload).lastInsertRowid);
  }

  /**
   * Appends many versions of one entity (each replacing one of its id at the same time), in order,
   * `APPEND_ROWS` rows per statement: one call into SQLite per chunk instead of one per version.
   * Leaves the current table alone.
   */
  appendVersions(entity: EntityName, rows: readonly VersionInsert[]): void {
    const t = this.of(entity);
    const params: unknown[] = [];
    let i = 0;
    for (; i + APPEND_ROWS <= rows.length; i += APPEND_ROWS) {
      params.length = 0;
      for (let j = i; j < i + APPEND_ROWS; j++) pushVersion(params, rows[j]!);
      t.insertVersions(APPEND_ROWS).run(params);
    }
    if (i === rows.length) return;
    params.length = 0;
    for (let j = i; j < rows.length; j++) pushVersion(params, rows[j]!);
    t.insertVersions(rows.length - i).run(params);
  }

  /**
   * Makes the current table hold this version, or nothing for the id when it is not live.
   * Inline layout only (the referenced layout goes through `write`).
   */
  setCurrent(entity: EntityName, id: string, createdAt: number, payload: string | null, live: boolean): void {
    if (this.layout !== 'inline') throw new Error('setCurrent needs the inline layout; use write()');
    const t = this.of(entity);
    if (live && payload !== null) t.upsertCurrent.run(id, createdAt, payload);
    else t.deleteCurrent.run(id);
  }
}

/** One version for `appendVersions`: `payload` already serialized. */
export interface VersionInsert {
  readonly id: string;
  readonly createdAt: number;
  readonly payload: string | null;
  readonly live: boolean;
}

/** Rows per multi-row INSERT (4 parameters each, well under SQLite's 32,766). */
const APPEND_ROWS = 64;

function pushVersion(params: unknown[], row: VersionInsert): void {
  params.push(row.id, row.createdAt, row.live ? 0 : 1, row.payload);
}

/** The async EntityReader port over a store's version tables (SQLite answers synchronously). */
export abstract class VersionTablesReader implements EntityReader {
  protected abstract readonly tables: VersionTables;

  async get(entity: EntityName, id: string, options?: ReadOptions) {
    return this.tables.get(entity, id, options);
  }
  async getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions) {
    return this.tables.getMany(entity, ids, options);
  }
  async findBy(entity: EntityName, field: string, value: string, options: PageOptions) {
    return this.tables.findBy(entity, field, value, options);
  }
  async findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ) {
    return this.tables.findByAny(entity, field, values, options);
  }
  async list(entity: EntityName, options: PageOptions) {
    return this.tables.list(entity, options);
  }
}
