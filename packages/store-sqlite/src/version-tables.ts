import { type EntityName, entities } from '@eggmesh/schema';
import {
  type AggregateGroup,
  bucketOffsets,
  bucketSizes,
  type Condition,
  type EntityReader,
  encodeCursor,
  type KeyValue,
  type PageOptions,
  type PlannedAggregate,
  type PlannedQuery,
  type QueryPage,
  type ReadOptions,
  type RelationPageOptions,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
  tooManyGroups,
} from '@eggmesh/store';
import type { Statement } from 'better-sqlite3';
import { quote, type SqliteDatabase } from './database.js';

interface Row {
  id: string;
  created_at: number;
  payload: string;
}

/** A row of the multi-row statements, read as an array (cheaper than an object per row): id, created_at, payload. */
type RawRow = [id: string, createdAt: number, payload: string];

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
 * The SQL type of a field's column and the expression that fills it from the payload: numbers keep
 * their JSON type (no affinity), timestamps become epoch ms (SQLite rounds to the millisecond), the
 * rest is text.
 */
function columnOf(entity: EntityName, field: string): { type: string; expression: string } {
  const extract = `json_extract(payload, '$.${field}')`;
  switch (entities[entity].queryFields[field]) {
    case 'number':
      return { type: '', expression: extract };
    case 'timestamp':
      return {
        type: ' INTEGER',
        expression: `CAST(round(unixepoch(${extract}, 'subsec') * 1000) AS INTEGER)`,
      };
    default:
      return { type: ' TEXT', expression: extract };
  }
}

const generatedColumn = (entity: EntityName, field: string): string => {
  const { type, expression } = columnOf(entity, field);
  return `${quote(field)}${type} GENERATED ALWAYS AS (${expression}) VIRTUAL`;
};

const columnsOf = (db: SqliteDatabase, table: string): Set<string> =>
  new Set(db.prepare(`SELECT name FROM pragma_table_xinfo('${table}')`).pluck().all() as string[]);

/**
 * Adds the columns of fields the catalogue indexes and an existing file's tables lack (a file
 * written before a field became queryable); the DDL that follows creates their indexes. Generated
 * columns are computed from the payload; the referenced layout's copies are filled from the versions.
 */
export function addMissingColumns(
  db: SqliteDatabase,
  entityNames: readonly EntityName[],
  layout: CurrentLayout,
): void {
  for (const entity of entityNames) {
    const versionColumns = columnsOf(db, `${entity}_versions`);
    if (versionColumns.size === 0) continue;
    const currentColumns = columnsOf(db, `${entity}_current`);
    const { versions, current } = tableNames(entity);
    for (const field of filterColumns(entity)) {
      if (!versionColumns.has(field))
        db.exec(`ALTER TABLE ${versions} ADD COLUMN ${generatedColumn(entity, field)}`);
      if (currentColumns.has(field)) continue;
      if (layout === 'inline') {
        db.exec(`ALTER TABLE ${current} ADD COLUMN ${generatedColumn(entity, field)}`);
      } else {
        db.exec(`ALTER TABLE ${current} ADD COLUMN ${quote(field)}${columnOf(entity, field).type}`);
        db.exec(
          `UPDATE ${current} SET ${quote(field)} = (SELECT v.${quote(field)} FROM ${versions} v WHERE v.seq = ${current}.version)`,
        );
      }
    }
  }
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

/** Which DDL: the tables, the indexes created after the rows (see `entityDdl`), or both. */
export type DdlPart = 'all' | 'tables' | 'indexes';

/**
 * DDL for an entity's tables; every filtered field is a generated column with an index. `tables`
 * creates the tables, `indexes` the secondary indexes of the versions table (a bulk build creates
 * those last, by sorting, instead of inserting into them row by row); `all` both.
 */
export function entityDdl(
  entity: EntityName,
  layout: CurrentLayout = 'inline',
  part: DdlPart = 'all',
): string {
  const { versions, current } = tableNames(entity);
  const fields = filterColumns(entity);
  const generated = fields.map((f) => `, ${generatedColumn(entity, f)}`).join('');
  const currentColumns =
    layout === 'inline'
      ? `payload TEXT NOT NULL${generated}`
      : `version INTEGER NOT NULL${fields.map((f) => `, ${quote(f)}${columnOf(entity, f).type}`).join('')}`;
  const tables = `
CREATE TABLE IF NOT EXISTS ${versions} (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL, created_at INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0,
  payload TEXT${generated}
);
CREATE TABLE IF NOT EXISTS ${current} (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, ${currentColumns}
);
${fields.map((f) => `CREATE INDEX IF NOT EXISTS ${quote(`${entity}_current_${f}`)} ON ${current} (${quote(f)}, id);`).join('\n')}`;
  const indexes = `
CREATE UNIQUE INDEX IF NOT EXISTS ${quote(`${entity}_versions_id`)} ON ${versions} (id, created_at);
${fields.map((f) => `CREATE INDEX IF NOT EXISTS ${quote(`${entity}_versions_${f}`)} ON ${versions} (${quote(f)}, id, created_at);`).join('\n')}`;
  return { tables, indexes, all: tables + indexes }[part];
}

const toRecord = (id: string, createdAt: number, payload: string): StoredRecord => ({
  id,
  createdAt,
  payload: JSON.parse(payload) as Record<string, unknown>,
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
  /** Current rows of the ids in `?`, a JSON array. */
  readonly getCurrentMany: Statement;
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
    this.getCurrentMany = db
      .prepare(`${this.currentFrom} WHERE c.id IN (SELECT value FROM json_each(?))`)
      .raw(true);
    this.getAt = db.prepare(
      `SELECT id, created_at, deleted, payload FROM ${versions} WHERE id = ? AND created_at <= ? ORDER BY created_at DESC LIMIT 1`,
    );
    this.latest = db.prepare(
      `SELECT seq, id, created_at, deleted, payload FROM ${versions} WHERE id = ? ORDER BY created_at DESC LIMIT 1`,
    );
    this.listCurrent = db
      .prepare(`${this.currentFrom} WHERE c.id > @after ORDER BY c.id LIMIT CAST(@limit AS INTEGER)`)
      .raw(true);
    this.listAt = db
      .prepare(
        `SELECT v.id, v.created_at, v.payload FROM ${versions} v
       WHERE v.id > @after AND v.created_at <= @at AND v.deleted = 0 AND ${newestAt}
       ORDER BY v.id LIMIT CAST(@limit AS INTEGER)`,
      )
      .raw(true);
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
      statement = this.db.prepare(insertVersionsSql(this.entity, rows));
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
      current: this.db
        .prepare(
          // CAST: a LIMIT bound straight from a JS number runs about 3× slower per call (measured).
          `${this.currentFrom} WHERE c.${col} = @value AND c.id > @after ORDER BY c.id LIMIT CAST(@limit AS INTEGER)`,
        )
        .raw(true),
      at: this.db
        .prepare(
          `SELECT v.id, v.created_at, v.payload FROM ${versions} v
         WHERE v.${col} = @value AND v.id > @after AND v.created_at <= @at AND v.deleted = 0 AND ${newestAt}
         ORDER BY v.id LIMIT CAST(@limit AS INTEGER)`,
        )
        .raw(true),
      // The rows of several values (`@values`, a JSON array) in one statement, one index range per
      // value; at most @limit rows in all (-1: every row).
      currentAll: this.db
        .prepare(
          `${this.currentFrom} WHERE c.${col} IN (SELECT value FROM json_each(@values)) AND c.id > @after
         LIMIT CAST(@limit AS INTEGER)`,
        )
        .raw(true),
      atAll: this.db
        .prepare(
          `SELECT v.id, v.created_at, v.payload FROM ${versions} v
         WHERE v.${col} IN (SELECT value FROM json_each(@values)) AND v.id > @after AND v.created_at <= @at
           AND v.deleted = 0 AND ${newestAt}
         LIMIT CAST(@limit AS INTEGER)`,
        )
        .raw(true),
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

  static ddl(
    entityNames: readonly EntityName[],
    layout: CurrentLayout = 'inline',
    part: DdlPart = 'all',
  ): string {
    return entityNames.map((e) => entityDdl(e, layout, part)).join('\n');
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

  private records(rows: readonly RawRow[]): StoredRecord[] {
    const out = new Array<StoredRecord>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const [id, createdAt, payload] = rows[i] as RawRow;
      out[i] = toRecord(id, createdAt, payload);
    }
    return out;
  }

  get(entity: EntityName, id: string, options?: ReadOptions): StoredRecord | null {
    const t = this.of(entity);
    if (options?.at === undefined) {
      const row = t.getCurrent.get(id) as Row | undefined;
      return row ? toRecord(row.id, row.created_at, row.payload) : null;
    }
    const row = t.getAt.get(id, options.at) as VersionRow | undefined;
    return row && !row.deleted && row.payload !== null ? toRecord(row.id, row.created_at, row.payload) : null;
  }

  /** The newest version whether live or deleted (projector state lives on in tombstones). */
  latest(entity: EntityName, id: string): VersionRow | undefined {
    return this.of(entity).latest.get(id) as VersionRow | undefined;
  }

  getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions): StoredRecord[] {
    if (options?.at === undefined) {
      // One statement for the batch (ids as a JSON array); a missing id has no row.
      return this.records(this.of(entity).getCurrentMany.all(JSON.stringify(ids)) as RawRow[]);
    }
    const out: StoredRecord[] = [];
    for (const id of new Set(ids)) {
      const record = this.get(entity, id, options);
      if (record) out.push(record);
    }
    return out;
  }

  findBy(entity: EntityName, field: string, value: string, options: PageOptions): StoredRecord[] {
    // By the projection key: a read by id.
    if (field === entities[entity].projectionKey) {
      if (options.limit < 1 || (options.after !== undefined && value <= options.after)) return [];
      const record = this.get(entity, value, options);
      return record ? [record] : [];
    }
    const s = this.of(entity).field(field);
    const params = { value, after: options.after ?? FIRST, limit: options.limit, at: options.at };
    const rows = (options.at === undefined ? s.current.all(params) : s.at.all(params)) as RawRow[];
    return this.records(rows);
  }

  /**
   * The rows whose `field` is any of `values`, in no particular order across values: every row, or
   * with `limit`/`after` a page per value. One statement for the whole batch (the values travel as a
   * JSON array); a page reads at most values × limit rows in it and keeps each value's first `limit`
   * by id, and only when a value has more rows than that does each value get its own range read.
   */
  findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): StoredRecord[] {
    const paged = options?.limit !== undefined || options?.after !== undefined;
    const unique = [...new Set(values)];
    const limit = options?.limit ?? Number.MAX_SAFE_INTEGER;
    const pageOf = (value: string) =>
      this.findBy(entity, field, value, { at: options?.at, limit, after: options?.after });
    if (field === entities[entity].projectionKey) {
      return paged ? unique.flatMap(pageOf) : this.getMany(entity, unique, options);
    }
    if (unique.length === 0 || limit < 1) return [];
    const s = this.of(entity).field(field);
    // The most rows the answer can hold; one more tells that some value has more than its page.
    const most = paged ? unique.length * limit : Number.POSITIVE_INFINITY;
    const params = {
      values: JSON.stringify(unique),
      after: options?.after ?? FIRST,
      limit: most < Number.MAX_SAFE_INTEGER ? most + 1 : -1,
      at: options?.at,
    };
    const rows = (options?.at === undefined ? s.currentAll.all(params) : s.atAll.all(params)) as RawRow[];
    if (rows.length > most) return unique.flatMap(pageOf);
    const records = this.records(rows);
    if (!paged || records.length <= limit) return records;
    const groups = new Map<unknown, StoredRecord[]>();
    for (const record of records) {
      const key = record.payload[field];
      const group = groups.get(key);
      if (group) group.push(record);
      else groups.set(key, [record]);
    }
    const out: StoredRecord[] = [];
    for (const group of groups.values()) {
      if (group.length > limit) group.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
      for (let i = 0; i < group.length && i < limit; i++) out.push(group[i] as StoredRecord);
    }
    return out;
  }

  /**
   * A planned list query compiled to SQL: the filter, the cursor's seek and the order run on the
   * indexed columns of the current rows (or of the versions newest at `at`); one statement reads
   * the page (and one row more, to tell whether another page follows), another the count.
   */
  query(plan: PlannedQuery): QueryPage {
    const { alias, from, payload, base, join, column } = this.source(plan.entity, plan.at);
    const filterParams: unknown[] = [];
    const filter = compileCondition(plan.where, false, column, filterParams);
    const seekParams: unknown[] = [];
    const seek = plan.after ? compileSeek(plan, column, seekParams) : '1';
    const order = plan.sort.map((k) => `${column(k.field)} ${k.direction}`).join(', ');
    const rows = this.statement(
      `SELECT ${alias}.id, ${alias}.created_at, ${payload} ${from} ${join} (${filter}) AND (${seek}) ORDER BY ${order} LIMIT CAST(? AS INTEGER)`,
    )
      .raw(true)
      .all(...base, ...filterParams, ...seekParams, plan.first + 1) as RawRow[];
    // The count reads the indexed columns only: no payloads, so no join to the versions.
    const totalCount = plan.count
      ? (this.statement(
          `SELECT count(*) ${this.source(plan.entity, plan.at, false).from} ${join} (${filter})`,
        )
          .pluck()
          .get(...base, ...filterParams) as number)
      : undefined;
    const records = this.records(rows.length > plan.first ? rows.slice(0, plan.first) : rows);
    return {
      records,
      totalCount,
      cursors: records.map((r) => encodeCursor(plan.sort, r)),
      hasNextPage: rows.length > plan.first,
    };
  }

  /**
   * What a query reads: the current rows (with their payloads unless `payloads` is false), or at a
   * time the newest version of each id when it is live; `column` names a field's indexed column there.
   * Without payloads the current rows are read alone: a count or an aggregate needs only their
   * indexed columns, and joining each row to its version is a second random read per row.
   */
  private source(entity: EntityName, at: number | undefined, payloads = true) {
    const t = this.of(entity);
    const { versions, current } = tableNames(entity);
    const alias = at === undefined ? 'c' : 'v';
    const from =
      at === undefined
        ? t.layout === 'inline' || !payloads
          ? `FROM ${current} c`
          : `FROM ${current} c JOIN ${versions} p ON p.seq = c.version`
        : `FROM ${versions} v WHERE v.created_at <= ? AND v.deleted = 0 AND v.created_at = (SELECT max(w.created_at) FROM ${versions} w WHERE w.id = v.id AND w.created_at <= ?)`;
    const payload = at === undefined ? (t.layout === 'inline' ? 'c.payload' : 'p.payload') : 'v.payload';
    const column = (field: string) =>
      field === 'id' || field === entities[entity].projectionKey ? `${alias}.id` : `${alias}.${quote(field)}`;
    return {
      alias,
      from,
      payload,
      base: at === undefined ? [] : [at, at],
      join: at === undefined ? 'WHERE' : 'AND',
      column,
    };
  }

  /** A planned aggregate as one GROUP BY statement over the indexed columns (at most maxGroups + 1 groups read). */
  aggregate(plan: PlannedAggregate): AggregateGroup[] {
    const { from, base, join, column } = this.source(plan.entity, plan.at, false);
    const params: unknown[] = [];
    const filter = compileCondition(plan.where, false, column, params);
    const keys = plan.groupBy.map(column);
    if (plan.bucket) {
      const t = column(plan.bucket.field);
      const size = bucketSizes[plan.bucket.unit];
      const offset = bucketOffsets[plan.bucket.unit];
      keys.push(`${t} - (((${t} - ${offset}) % ${size}) + ${size}) % ${size}`);
    }
    const metrics = plan.fields.flatMap((f) => {
      const col = column(f);
      return [`coalesce(sum(${col}), 0)`, `min(${col})`, `max(${col})`, `avg(${col})`];
    });
    const select = [...keys, 'count(*)', ...metrics].join(', ');
    // Without keys SQL answers one row even over no rows: no rows make no group, as on MongoDB.
    const positions = keys.map((_, i) => i + 1).join(', ');
    const grouping = keys.length ? ` GROUP BY ${positions} ORDER BY ${positions}` : ' HAVING count(*) > 0';
    const rows = this.statement(
      `SELECT ${select} ${from} ${join} (${filter})${grouping} LIMIT CAST(? AS INTEGER)`,
    )
      .raw(true)
      .all(...base, ...params, plan.maxGroups + 1) as unknown[][];
    if (rows.length > plan.maxGroups) throw tooManyGroups(plan);
    const groupCount = plan.groupBy.length;
    const first = keys.length + 1;
    return rows.map((row) => {
      const per = (offset: number) =>
        Object.fromEntries(plan.fields.map((f, i) => [f, row[first + i * 4 + offset] as number | null]));
      return {
        keys: Object.fromEntries(plan.groupBy.map((f, i) => [f, row[i] as string | null])),
        bucket: plan.bucket ? (row[groupCount] as number | null) : null,
        count: row[keys.length] as number,
        sum: per(0) as Record<string, number>,
        min: per(1),
        max: per(2),
        avg: per(3),
      };
    });
  }

  /** Prepared statements of compiled queries, by their SQL (the same query shape reuses its plan). */
  private readonly compiled = new Map<string, Statement>();

  private statement(sql: string): Statement {
    let statement = this.compiled.get(sql);
    if (!statement) {
      // Query shapes are few in practice; a client cycling through shapes only costs re-preparing.
      if (this.compiled.size >= COMPILED_STATEMENTS) this.compiled.clear();
      statement = this.db.prepare(sql);
      this.compiled.set(sql, statement);
    }
    return statement;
  }

  list(entity: EntityName, options: PageOptions): StoredRecord[] {
    const t = this.of(entity);
    const params = { after: options.after ?? FIRST, limit: options.limit, at: options.at };
    return this.records((options.at === undefined ? t.listCurrent : t.listAt).all(params) as RawRow[]);
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
    for (const chunk of versionChunks(rows)) t.insertVersions(chunk.rows).run(chunk.params);
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

/** Compiled query statements a store keeps prepared. */
const COMPILED_STATEMENTS = 256;

/**
 * A condition as SQL over `column(field)`, its values appended to `params`. `negated` pushes a `not`
 * down to the comparisons, where a row without the field counts as not matching (`IS NULL OR NOT …`),
 * so SQL's unknown never leaks into `not`.
 */
function compileCondition(
  where: Condition,
  negated: boolean,
  column: (field: string) => string,
  params: unknown[],
): string {
  switch (where.op) {
    case 'and':
    case 'or': {
      if (where.of.length === 0) return (where.op === 'and') !== negated ? '1' : '0';
      const joiner = (where.op === 'and') !== negated ? ' AND ' : ' OR ';
      return `(${where.of.map((c) => compileCondition(c, negated, column, params)).join(joiner)})`;
    }
    case 'not':
      return compileCondition(where.of, !negated, column, params);
    default: {
      const col = column(where.field);
      let test: string;
      if (where.op === 'in') {
        const values = where.value as readonly KeyValue[];
        if (values.length === 0) return negated ? '1' : '0';
        test = `${col} IN (${values.map(() => '?').join(', ')})`;
        params.push(...values);
      } else {
        const sql = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' }[where.op];
        test = `${col} ${sql} ?`;
        params.push(where.value as KeyValue);
      }
      return negated ? `(${col} IS NULL OR NOT (${test}))` : test;
    }
  }
}

/**
 * The rows after the cursor's row in the query's order: for some key, every earlier key equal and
 * this one further along (missing values come first ascending, last descending).
 */
function compileSeek(plan: PlannedQuery, column: (field: string) => string, params: unknown[]): string {
  const after = plan.after as readonly KeyValue[];
  const terms: string[] = [];
  plan.sort.forEach((key, i) => {
    const parts: string[] = [];
    for (let j = 0; j < i; j++) {
      const col = column((plan.sort[j] as { field: string }).field);
      const value = after[j] as KeyValue;
      if (value === null) parts.push(`${col} IS NULL`);
      else {
        parts.push(`${col} = ?`);
        params.push(value);
      }
    }
    const col = column(key.field);
    const value = after[i] as KeyValue;
    if (key.direction === 'ASC') {
      if (value === null) parts.push(`${col} IS NOT NULL`);
      else {
        parts.push(`${col} > ?`);
        params.push(value);
      }
    } else if (value === null) {
      parts.push('0');
    } else {
      parts.push(`(${col} < ? OR ${col} IS NULL)`);
      params.push(value);
    }
    terms.push(`(${parts.join(' AND ')})`);
  });
  return terms.join(' OR ');
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

/** `INSERT OR REPLACE` of `rows` versions of `entity` in one statement (`versionChunks` gives its parameters). */
function insertVersionsSql(entity: EntityName, rows: number): string {
  return `INSERT OR REPLACE INTO ${tableNames(entity).versions} (id, created_at, deleted, payload) VALUES ${Array(rows).fill('(?, ?, ?, ?)').join(', ')}`;
}

/** `rows` in order, `APPEND_ROWS` versions per multi-row INSERT: each chunk's row count and parameters. */
function versionChunks(rows: readonly VersionInsert[]): Array<{ rows: number; params: unknown[] }> {
  const chunks: Array<{ rows: number; params: unknown[] }> = [];
  for (let i = 0; i < rows.length; i += APPEND_ROWS) {
    const params: unknown[] = [];
    const end = Math.min(i + APPEND_ROWS, rows.length);
    for (let j = i; j < end; j++) {
      const row = rows[j]!;
      params.push(row.id, row.createdAt, row.live ? 0 : 1, row.payload);
    }
    chunks.push({ rows: end - i, params });
  }
  return chunks;
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
