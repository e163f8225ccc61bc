import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { type EntityName, entities, entityNames } from '@eggmesh/schema';
import {
  type LoadedProjections,
  type PageOptions,
  type PlannedQuery,
  type ProjectionChange,
  type ProjectionCommit,
  type ProjectionDocument,
  type ProjectionKeys,
  type ProjectionStateRow,
  type ProjectionStore,
  type ProjectionWrite,
  projectionKey,
  type QueryPage,
  type ReadOptions,
  type RelationPageOptions,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
} from '@eggmesh/store';
import Database, { type Statement } from 'better-sqlite3';
import { openDatabase, type SqliteDatabase, type Synchronous } from './database.js';
import {
  addMissingColumns,
  type DdlPart,
  tableNames,
  type VersionInsert,
  VersionTables,
  VersionTablesReader,
} from './version-tables.js';

export const projectionEntities: readonly EntityName[] = entityNames.filter(
  (e) => entities[e].kind === 'projection',
);

const STATE_TABLES = `
CREATE TABLE IF NOT EXISTS projector_state (
  kind TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, ref TEXT,
  PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS projector_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS projection_changes (
  position INTEGER NOT NULL, entity TEXT NOT NULL, id TEXT NOT NULL, created_at INTEGER NOT NULL,
  PRIMARY KEY (position, entity, id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO projector_meta (key, value) VALUES ('checkpoint', 0);`;
const STATE_INDEXES = `
CREATE INDEX IF NOT EXISTS projector_state_ref ON projector_state (kind, ref);`;

const CURRENT = 'CURRENT';

/** The generation file the projections directory points at, or null before the first projector run. */
export function currentGeneration(dir: string): string | null {
  try {
    const name = readFileSync(join(dir, CURRENT), 'utf8').trim();
    return name.length > 0 ? name : null;
  } catch {
    return null;
  }
}

/** Points the directory at `generation` atomically (readers switch on their next check). */
export function promoteGeneration(dir: string, generation: string): void {
  const tmp = join(dir, `${CURRENT}.tmp-${process.pid}`);
  writeFileSync(tmp, `${generation}\n`);
  renameSync(tmp, join(dir, CURRENT));
}

/** A fresh generation file name; names sort by creation. */
export function newGenerationName(now = Date.now()): string {
  return `gen-${now.toString().padStart(15, '0')}.db`;
}

/** Removes generation files other than the current one and `keep` (with their WAL files). */
export function removeStaleGenerations(dir: string, keep: readonly string[] = []): string[] {
  const current = currentGeneration(dir);
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    const base = name.replace(/-(wal|shm)$/, '');
    if (!/^gen-\d+\.db$/.test(base) || base === current || keep.includes(base)) continue;
    rmSync(join(dir, name), { force: true });
    if (base === name) removed.push(name);
  }
  return removed;
}

/** Groups `items` by `group`, collecting each group's distinct `value`s. */
function groupBy<T, G>(
  items: readonly T[],
  group: (item: T) => G,
  value: (item: T) => string,
): Map<G, string[]> {
  const out = new Map<G, Set<string>>();
  for (const item of items) {
    const g = group(item);
    const set = out.get(g) ?? new Set<string>();
    if (set.size === 0) out.set(g, set);
    set.add(value(item));
  }
  return new Map([...out].map(([g, set]) => [g, [...set]]));
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const byId = (a: { readonly id: string }, b: { readonly id: string }): number =>
  a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** A generation's tables and indexes (`tables` and `indexes`: one part, as for `entityDdl`). */
const generationDdl = (part: DdlPart = 'all'): string =>
  VersionTables.ddl(projectionEntities, 'inline', part) +
  { tables: STATE_TABLES, indexes: STATE_INDEXES, all: STATE_TABLES + STATE_INDEXES }[part];
const READ_CHECKPOINT_SQL = "SELECT value FROM projector_meta WHERE key = 'checkpoint'";
/** Moves the checkpoint from the second parameter to the first: changes no row when it was elsewhere. */
const MOVE_CHECKPOINT_SQL = "UPDATE projector_meta SET value = ? WHERE key = 'checkpoint' AND value = ?";
const PUT_STATE_SQL = 'INSERT OR REPLACE INTO projector_state (kind, id, value, ref) VALUES (?, ?, ?, ?)';
const STATE_COLUMNS = 'SELECT kind, id, value, ref FROM projector_state';
/** One row per document a live commit wrote (its newest version of the batch): the subscriptions' feed. */
const PUT_CHANGE_SQL =
  'INSERT OR REPLACE INTO projection_changes (position, entity, id, created_at) VALUES (?, ?, ?, ?)';
/** The changes of one entity in (?, ?], with the version each names. */
const changesSql = (entity: EntityName): string =>
  `SELECT c.position, c.id, v.deleted, v.payload FROM projection_changes c
    JOIN ${tableNames(entity).versions} v ON v.id = c.id AND v.created_at = c.created_at
    WHERE c.position > ? AND c.position <= ? AND c.entity = '${entity}'`;
const STATE_MANY_SQL = `${STATE_COLUMNS} WHERE kind = ? AND id IN (SELECT value FROM json_each(?))`;
const BY_REF_MANY_SQL = `${STATE_COLUMNS} WHERE kind = ? AND ref IN (SELECT value FROM json_each(?)) ORDER BY id`;

/** Each asked id's newest version (live or a tombstone), as `id, deleted, payload`: one descending seek of the (id, created_at) index. */
const latestManySql = (entity: EntityName): string => {
  const { versions } = tableNames(entity);
  return `SELECT v.id, v.deleted, v.payload FROM json_each(?) j JOIN ${versions} v
    ON v.seq = (SELECT w.seq FROM ${versions} w WHERE w.id = j.value ORDER BY w.created_at DESC LIMIT 1)`;
};

/**
 * One statement: its SQL, its positional parameters and, for a write, how many rows it must change
 * (the transaction fails and rolls back otherwise).
 */
type PlannedStatement = readonly [sql: string, params: readonly unknown[], expectedChanges?: number];

const toStateRow = ([kind, id, value, ref]: unknown[]): ProjectionStateRow => ({
  kind: kind as string,
  id: id as string,
  ref: ref as string | null,
  value: JSON.parse(value as string) as Record<string, unknown>,
});

/** What a commit writes, in the order it writes it. */
interface CommitPlan {
  /** Per entity, its versions in id order (a stable sort keeps each id's versions in log order). */
  readonly versions: ReadonlyArray<readonly [EntityName, VersionInsert[]]>;
  /** Each written document's last version, for the current tables. */
  readonly current: ReadonlyArray<{ readonly entity: EntityName } & VersionInsert>;
  /** `kind, id, value (JSON), ref` of each state row. */
  readonly state: ReadonlyArray<readonly [string, string, string, string | null]>;
}

/**
 * Every version is kept (so `at` reads are exact), appended per entity in log order (a version's seq
 * orders it only among its own id's); the current table needs only each id's last. In id order,
 * consecutive inserts land on neighbouring pages of the (id, created_at) index instead of random ones.
 */
function planCommit(batch: ProjectionCommit): CommitPlan {
  const byEntity = new Map<EntityName, VersionInsert[]>();
  const last = new Map<string, { readonly entity: EntityName } & VersionInsert>();
  for (const doc of batch.documents) {
    const row = {
      id: doc.id,
      createdAt: doc.createdAt,
      payload: doc.json ?? JSON.stringify(doc.payload),
      live: doc.live,
    };
    let rows = byEntity.get(doc.entity);
    if (!rows) {
      rows = [];
      byEntity.set(doc.entity, rows);
    }
    rows.push(row);
    last.set(`${doc.entity}\u0000${doc.id}`, { entity: doc.entity, ...row });
  }
  return {
    versions: [...byEntity].map(([entity, rows]) => [entity, rows.sort(byId)] as const),
    current: [...last.values()],
    state: batch.state.map((row) => [row.kind, row.id, JSON.stringify(row.value), row.ref] as const),
  };
}

/** A load's answer as it is put together. */
interface Loading {
  readonly documents: Map<string, ProjectionDocument>;
  readonly state: Map<string, ProjectionStateRow>;
  readonly stateByRef: Map<string, ProjectionStateRow[]>;
}

/** The queries of a `load` (one per entity, per state kind, per ref kind, then the checkpoint), and how their rows make the answer. */
function planLoad(keys: ProjectionKeys): {
  readonly queries: PlannedStatement[];
  assemble(results: readonly unknown[][][]): LoadedProjections;
} {
  const queries: PlannedStatement[] = [];
  const steps: Array<(rows: unknown[][], into: Loading) => void> = [];
  for (const [entity, ids] of groupBy(
    keys.documents,
    (k) => k.entity,
    (k) => k.id,
  )) {
    queries.push([latestManySql(entity), [JSON.stringify(ids)]]);
    steps.push((rows, into) => {
      for (const [id, deleted, payload] of rows) {
        if (payload === null) continue;
        into.documents.set(projectionKey(entity, id as string), {
          id: id as string,
          live: deleted === 0,
          payload: JSON.parse(payload as string) as Record<string, unknown>,
        });
      }
    });
  }
  for (const [kind, ids] of groupBy(
    keys.state,
    (k) => k.kind,
    (k) => k.id,
  )) {
    queries.push([STATE_MANY_SQL, [kind, JSON.stringify(ids)]]);
    steps.push((rows, into) => {
      for (const row of rows) into.state.set(projectionKey(kind, row[1] as string), toStateRow(row));
    });
  }
  for (const [kind, refs] of groupBy(
    keys.stateByRef,
    (k) => k.kind,
    (k) => k.ref,
  )) {
    queries.push([BY_REF_MANY_SQL, [kind, JSON.stringify(refs)]]);
    steps.push((rows, into) => {
      for (const ref of refs) into.stateByRef.set(projectionKey(kind, ref), []);
      for (const row of rows) {
        if (row[3] !== null)
          into.stateByRef.get(projectionKey(kind, row[3] as string))?.push(toStateRow(row));
      }
    });
  }
  queries.push([READ_CHECKPOINT_SQL, []]);
  return {
    queries,
    assemble(results) {
      const checkpoint = results[results.length - 1]?.[0]?.[0];
      const loaded: Loading = { documents: new Map(), state: new Map(), stateByRef: new Map() };
      for (const [i, step] of steps.entries()) step(results[i] ?? [], loaded);
      return { checkpoint: typeof checkpoint === 'number' ? checkpoint : 0, ...loaded };
    },
  };
}

export interface ProjectionStoreOptions {
  /** The projections directory (holds CURRENT and the generation files). */
  readonly dir: string;
  /** Open this generation instead of the current one (rebuilds write a new generation). */
  readonly generation?: string;
  readonly synchronous?: Synchronous;
}

/**
 * Page cache of the live projector's connection (KiB, as SQLite's negative `cache_size`). The projector
 * keeps the documents it works on decoded in its own cache (services/projector/src/cache.ts), so SQLite's
 * cache mostly holds pages it has just written and needs less than the write-api's 64 MiB.
 */
const LIVE_CACHE_KIB = 16 * 1024;

/** Page cache of a bulk build (KiB, as SQLite's negative `cache_size`): the current and state rows it updates at random places, and the sorts of `finish()`. */
const BULK_CACHE_KIB = 128 * 1024;

/** The projector's writable store over one generation file. */
export class SqliteProjectionStore extends VersionTablesReader implements ProjectionStore {
  readonly db: SqliteDatabase;
  readonly generation: string;
  protected readonly tables: VersionTables;
  /** Prepared statements by SQL, answering rows as arrays (`load`'s queries). */
  private readonly rawStatements = new Map<string, Statement>();
  private readonly readCheckpoint: Statement;
  private readonly commitTx: (batch: ProjectionCommit) => void;

  constructor(
    readonly dir: string,
    generation: string,
    synchronous?: Synchronous,
  ) {
    super();
    this.generation = generation;
    this.db = openDatabase(join(dir, generation), {
      cacheKib: LIVE_CACHE_KIB,
      ...(synchronous ? { synchronous } : {}),
    });
    addMissingColumns(this.db, projectionEntities, 'inline');
    this.db.exec(generationDdl());
    this.tables = new VersionTables(this.db, projectionEntities, true);
    this.readCheckpoint = this.db.prepare(READ_CHECKPOINT_SQL).pluck();
    const putState = this.db.prepare(PUT_STATE_SQL);
    const moveCheckpoint = this.db.prepare(MOVE_CHECKPOINT_SQL);
    const putChange = this.db.prepare(PUT_CHANGE_SQL);
    this.commitTx = this.db.transaction((batch: ProjectionCommit) => {
      const at = this.readCheckpoint.get() as number;
      if (at !== batch.expectedCheckpoint) {
        throw new StoreError(
          storeErrorCodes.CONFLICT,
          `checkpoint moved to ${at} while a batch from ${batch.expectedCheckpoint} was being applied`,
        );
      }
      const plan = planCommit(batch);
      for (const [entity, rows] of plan.versions) this.tables.appendVersions(entity, rows);
      for (const v of plan.current) this.tables.setCurrent(v.entity, v.id, v.createdAt, v.payload, v.live);
      for (const row of plan.state) putState.run(row);
      for (const v of plan.current) putChange.run(batch.checkpoint, v.entity, v.id, v.createdAt);
      moveCheckpoint.run(batch.checkpoint, at);
    }).immediate;
  }

  /** A prepared statement of this connection answering rows as arrays, by its SQL. */
  private rawStatement(sql: string): Statement {
    let statement = this.rawStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql).raw(true);
      this.rawStatements.set(sql, statement);
    }
    return statement;
  }

  checkpointSync(): number {
    return this.readCheckpoint.get() as number;
  }

  async checkpoint(): Promise<number> {
    return this.checkpointSync();
  }

  /**
   * Everything a batch needs in one read transaction: per entity (and per state kind) one statement
   * over the asked ids, passed as one JSON array (`json_each`), so the statement count does not grow
   * with the batch.
   */
  async load(keys: ProjectionKeys): Promise<LoadedProjections> {
    const plan = planLoad(keys);
    const results = this.db
      .transaction(() =>
        plan.queries.map(([sql, params]) => this.rawStatement(sql).all(params) as unknown[][]),
      )
      .deferred();
    return plan.assemble(results);
  }

  async commit(batch: ProjectionCommit): Promise<void> {
    this.commitTx(batch);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/** A document's newest version in a bulk build: its row's `seq`, and what a load answers. */
interface BuiltDocument {
  seq: number;
  createdAt: number;
  live: boolean;
  json: string;
  /** The commit that wrote it last (a commit updates the current row of each document once). */
  commit: number;
}

/** A state row in a bulk build, its value as JSON text. */
interface BuiltState {
  readonly id: string;
  json: string;
  ref: string | null;
}

/** Version rows per multi-row INSERT of a bulk build (5 parameters each). */
const NUMBERED_ROWS = 64;

const insertNumberedSql = (entity: EntityName, rows: number): string =>
  `INSERT INTO ${tableNames(entity).versions} (seq, id, created_at, deleted, payload) VALUES ${Array(rows).fill('(?, ?, ?, ?, ?)').join(', ')}`;
/** The rows whose seq is in `?`, a JSON array. */
const IN_SEQS = 'seq IN (SELECT value FROM json_each(?))';
const deleteVersionsSql = (entity: EntityName): string =>
  `DELETE FROM ${tableNames(entity).versions} WHERE ${IN_SEQS}`;
/** The current rows of the versions with these seqs (each id's newest, live). */
const upsertCurrentSql = (entity: EntityName): string => {
  const { versions, current } = tableNames(entity);
  return `INSERT INTO ${current} (id, created_at, payload)
    SELECT id, created_at, payload FROM ${versions} WHERE ${IN_SEQS}
    ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, payload = excluded.payload`;
};
/** No current row for the ids of the versions with these seqs (tombstones). */
const deleteCurrentSql = (entity: EntityName): string => {
  const { versions, current } = tableNames(entity);
  return `DELETE FROM ${current} WHERE id IN (SELECT id FROM ${versions} WHERE ${IN_SEQS})`;
};

/** `map.get(key)`, or a new value made and set first. */
function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/**
 * A new generation as a rebuild writes it, nobody reading it yet. It is the generation's only writer
 * (a rebuild holds the rebuild lock) and it starts empty, so it keeps what a load can ask for in
 * memory (each document's newest version as JSON text, every state row) and loads never read the file.
 * The file then needs no versions index while it is built: random inserts into the (id, created_at)
 * index would keep the writer busy for most of a large rebuild. Each commit appends its version rows
 * (numbered here, so a version written again at the same time replaces its row) and updates the
 * current and state tables in one transaction. `finish()` creates the versions and ref indexes by sorting, puts the file in WAL, fsyncs it and
 * returns an ordinary store over it. Built without a journal on disk and without fsyncs; a crash before
 * `finish()` leaves a file that was never promoted (the next rebuild removes it).
 */
export class BulkProjectionStore implements ProjectionStore {
  readonly file: string;
  private readonly db: SqliteDatabase;
  /** Prepared statements by SQL. */
  private readonly statements = new Map<string, Statement>();
  private readonly write: (statements: readonly PlannedStatement[]) => void;
  /** The checkpoint of the last commit. */
  private posted = 0;
  /** Commits made. */
  private commits = 0;
  /** Each document's newest version, by entity and id. */
  private readonly documents = new Map<EntityName, Map<string, BuiltDocument>>();
  /** Every state row, by kind and id. */
  private readonly state = new Map<string, Map<string, BuiltState>>();
  /** The ids of the state rows of each kind, by ref. */
  private readonly byRef = new Map<string, Map<string, Set<string>>>();
  /** The last version row's `seq` (one numbering for every entity's table). */
  private lastSeq = 0;
  private failure: Error | undefined;
  private ended = false;

  constructor(
    readonly dir: string,
    readonly generation: string,
    private readonly synchronous: Synchronous = 'normal',
  ) {
    this.file = join(dir, generation);
    if (existsSync(this.file)) throw new Error(`${this.file} exists: a bulk build writes a new generation`);
    mkdirSync(dir, { recursive: true });
    this.db = new Database(this.file);
    this.db.exec(
      `PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA cache_size = -${BULK_CACHE_KIB};
      ${generationDdl('tables')}`,
    );
    this.write = this.db.transaction((statements: readonly PlannedStatement[]) => {
      for (const [sql, params, expected] of statements) {
        const info = this.statement(sql).run(params);
        if (expected !== undefined && info.changes !== expected) {
          throw new Error(`a statement changed ${info.changes} rows where ${expected} was expected`);
        }
      }
    }).immediate;
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private usable(): void {
    if (this.failure) throw this.failure;
    if (this.ended)
      throw new StoreError(storeErrorCodes.UNAVAILABLE, `the bulk build of ${this.generation} has ended`);
  }

  async checkpoint(): Promise<number> {
    this.usable();
    return this.posted;
  }

  /** As of every commit handed over, from memory. */
  async load(keys: ProjectionKeys): Promise<LoadedProjections> {
    this.usable();
    const documents = new Map<string, ProjectionDocument>();
    for (const { entity, id } of keys.documents) {
      const found = this.documents.get(entity)?.get(id);
      if (found)
        documents.set(projectionKey(entity, id), { id, live: found.live, payload: JSON.parse(found.json) });
    }
    const stateRow = (kind: string, row: BuiltState): ProjectionStateRow => ({
      kind,
      id: row.id,
      ref: row.ref,
      value: JSON.parse(row.json) as Record<string, unknown>,
    });
    const state = new Map<string, ProjectionStateRow>();
    for (const { kind, id } of keys.state) {
      const found = this.state.get(kind)?.get(id);
      if (found) state.set(projectionKey(kind, id), stateRow(kind, found));
    }
    const stateByRef = new Map<string, ProjectionStateRow[]>();
    for (const { kind, ref } of keys.stateByRef) {
      const rows = this.state.get(kind);
      const ids = [...(this.byRef.get(kind)?.get(ref) ?? [])].sort();
      stateByRef.set(
        projectionKey(kind, ref),
        ids.map((id) => stateRow(kind, rows!.get(id)!)),
      );
    }
    return { checkpoint: this.posted, documents, state, stateByRef };
  }

  /** Writes the batch in one transaction; a failure ends the build (memory already holds the batch). */
  async commit(batch: ProjectionCommit): Promise<void> {
    this.usable();
    if (batch.expectedCheckpoint !== this.posted) {
      throw new StoreError(
        storeErrorCodes.CONFLICT,
        `checkpoint moved to ${this.posted} while a batch from ${batch.expectedCheckpoint} was being applied`,
      );
    }
    this.commits += 1;
    const statements = this.documentStatements(batch.documents);
    for (const row of batch.state) statements.push([PUT_STATE_SQL, this.putState(row)]);
    statements.push([MOVE_CHECKPOINT_SQL, [batch.checkpoint, batch.expectedCheckpoint], 1]);
    this.posted = batch.checkpoint;
    try {
      this.write(statements);
    } catch (error) {
      this.failure = new StoreError(
        storeErrorCodes.UNAVAILABLE,
        `building ${this.generation}: ${(error as Error).message}`,
      );
      throw this.failure;
    }
  }

  /**
   * The statements writing `writes`: delete the rows that versions written again at the same time
   * replace (a row replaced within the batch is never sent), append the versions (numbered in log
   * order), then set each written document's current row from its newest version.
   */
  private documentStatements(writes: readonly ProjectionWrite[]): PlannedStatement[] {
    const firstSeq = this.lastSeq + 1;
    const skip = new Uint8Array(writes.length);
    const replaced = new Map<EntityName, number[]>();
    /** Each document this batch writes, once, with its entity: its current row is set at the end. */
    const newest: Array<readonly [EntityName, BuiltDocument]> = [];
    const texts: string[] = [];
    for (const [i, doc] of writes.entries()) {
      const seq = firstSeq + i;
      const json = doc.json ?? JSON.stringify(doc.payload);
      texts.push(json);
      const ids = entry(this.documents, doc.entity, () => new Map<string, BuiltDocument>());
      const built = ids.get(doc.id);
      if (!built) {
        const made = { seq, createdAt: doc.createdAt, live: doc.live, json, commit: this.commits };
        ids.set(doc.id, made);
        newest.push([doc.entity, made]);
        continue;
      }
      if (built.createdAt === doc.createdAt) {
        if (built.seq >= firstSeq) skip[built.seq - firstSeq] = 1;
        else entry(replaced, doc.entity, () => []).push(built.seq);
      }
      if (built.commit !== this.commits) {
        built.commit = this.commits;
        newest.push([doc.entity, built]);
      }
      built.seq = seq;
      built.createdAt = doc.createdAt;
      built.live = doc.live;
      built.json = json;
    }
    this.lastSeq = firstSeq + writes.length - 1;
    const statements: PlannedStatement[] = [];
    for (const [entity, seqs] of replaced)
      statements.push([deleteVersionsSql(entity), [JSON.stringify(seqs)]]);
    const appending = new Map<EntityName, unknown[]>();
    for (const [i, doc] of writes.entries()) {
      if (skip[i] === 1) continue;
      const params = entry(appending, doc.entity, () => []);
      params.push(firstSeq + i, doc.id, doc.createdAt, doc.live ? 0 : 1, texts[i]);
      if (params.length === NUMBERED_ROWS * 5) {
        statements.push([insertNumberedSql(doc.entity, NUMBERED_ROWS), params]);
        appending.delete(doc.entity);
      }
    }
    for (const [entity, params] of appending)
      statements.push([insertNumberedSql(entity, params.length / 5), params]);
    const live = new Map<EntityName, number[]>();
    const dead = new Map<EntityName, number[]>();
    for (const [entity, built] of newest) entry(built.live ? live : dead, entity, () => []).push(built.seq);
    for (const [entity, seqs] of live) statements.push([upsertCurrentSql(entity), [JSON.stringify(seqs)]]);
    for (const [entity, seqs] of dead) statements.push([deleteCurrentSql(entity), [JSON.stringify(seqs)]]);
    return statements;
  }

  /** Keeps `row` (and its ref) in memory; its `PUT_STATE_SQL` parameters. */
  private putState(row: ProjectionStateRow): readonly unknown[] {
    const json = JSON.stringify(row.value);
    const rows = entry(this.state, row.kind, () => new Map<string, BuiltState>());
    const refs = entry(this.byRef, row.kind, () => new Map<string, Set<string>>());
    const built = rows.get(row.id);
    if (built?.ref !== row.ref) {
      if (built?.ref != null) refs.get(built.ref)?.delete(row.id);
      if (row.ref !== null) entry(refs, row.ref, () => new Set()).add(row.id);
    }
    if (built) {
      built.json = json;
      built.ref = row.ref;
    } else rows.set(row.id, { id: row.id, json, ref: row.ref });
    return [row.kind, row.id, json, row.ref];
  }

  /**
   * Ends the build: creates the indexes, switches the file to WAL with the
   * configured synchronous level and fsyncs it, so what was built survives a power cut before anyone
   * is pointed at it. Returns the ordinary store over the generation; call before promoting.
   */
  async finish(): Promise<SqliteProjectionStore> {
    this.usable();
    this.ended = true;
    this.documents.clear();
    this.state.clear();
    this.byRef.clear();
    try {
      this.db.exec(generationDdl('indexes'));
      // Switching needs the file to itself for a moment; a generation left in rollback mode would make
      // readers and the projector block each other.
      const mode = this.db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal')
        throw new Error(`${this.generation} stayed in journal mode ${String(mode)}, not WAL`);
    } finally {
      this.db.close();
    }
    const fd = openSync(this.file, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return new SqliteProjectionStore(this.dir, this.generation, this.synchronous);
  }

  /** Closes the file; an unfinished generation stays on disk. */
  async close(): Promise<void> {
    this.ended = true;
    if (this.db.open) this.db.close();
  }
}

export type { ProjectionWrite };

/** Opens the current generation for writing, creating the first one when the directory is new. */
export function openProjectionStore(options: ProjectionStoreOptions): SqliteProjectionStore {
  let generation = options.generation ?? currentGeneration(options.dir);
  const fresh = generation === null;
  generation ??= newGenerationName();
  const store = new SqliteProjectionStore(options.dir, generation, options.synchronous);
  if (fresh) promoteGeneration(options.dir, generation);
  return store;
}

/** Starts the bulk build of a new generation (`options.generation`, a new file; not promoted). */
export function openBulkProjectionStore(
  options: ProjectionStoreOptions & { readonly generation: string },
): BulkProjectionStore {
  return new BulkProjectionStore(options.dir, options.generation, options.synchronous);
}

/**
 * Read-only access to whichever generation is current: a rebuild that promotes a new
 * generation is picked up within `recheckMs`, without a restart.
 */
export class ProjectionReader {
  private db: SqliteDatabase | null = null;
  private tables: VersionTables | null = null;
  private checkpointStatement: Statement | null = null;
  private dataVersion: Statement | null = null;
  /** Per projection entity, its `changesSql` on the current generation. */
  private changeStatements: ReadonlyArray<readonly [EntityName, Statement]> | null = null;
  private generation: string | null = null;
  private currentMtime = 0;
  private checkedAt = -Infinity;

  constructor(
    readonly dir: string,
    private readonly recheckMs = 250,
  ) {}

  private refresh(): VersionTables | null {
    const now = performance.now();
    if (now - this.checkedAt < this.recheckMs && this.tables) return this.tables;
    this.checkedAt = now;
    let mtime = 0;
    try {
      mtime = statSync(join(this.dir, CURRENT)).mtimeMs;
    } catch {
      return this.tables;
    }
    if (mtime === this.currentMtime && this.tables) return this.tables;
    const generation = currentGeneration(this.dir);
    // CURRENT may name a file that is not there (yet): keep serving what we have and look again later.
    if (!generation || !existsSync(join(this.dir, generation))) return this.tables;
    if (generation !== this.generation) {
      const db = openDatabase(join(this.dir, generation), { readonly: true });
      this.db?.close();
      this.db = db;
      this.generation = generation;
      this.tables = new VersionTables(db, projectionEntities, false, 'inline');
      this.checkpointStatement = db
        .prepare("SELECT value FROM projector_meta WHERE key = 'checkpoint'")
        .pluck();
      this.dataVersion = db.prepare('PRAGMA data_version').pluck();
      this.changeStatements = null;
    }
    this.currentMtime = mtime;
    return this.tables;
  }

  /** Changes whenever another connection commits to the current generation, or another becomes current. */
  version(): string {
    this.refresh();
    return `${this.generation}:${this.dataVersion?.get() as number | undefined}`;
  }

  /** The position the projections reflect (0 before the projector's first batch). */
  checkpoint(): number {
    this.refresh();
    return (this.checkpointStatement?.get() as number | undefined) ?? 0;
  }

  /**
   * What the live commits in (`after`, `through`] wrote, in commit order, in one read transaction. A
   * generation a rebuild wrote has no changes below its first live commit.
   */
  changes(after: number, through: number): ProjectionChange[] {
    if (!this.refresh() || !this.db || through <= after) return [];
    const db = this.db;
    // Prepared on first use: the generation has the table once a projector of this version opened it.
    this.changeStatements ??= projectionEntities.map(
      (e) => [e, db.prepare(changesSql(e)).raw(true)] as const,
    );
    const statements = this.changeStatements;
    const rows = this.db
      .transaction(() =>
        statements.flatMap(([entity, statement]) =>
          (statement.all(after, through) as unknown[][]).map(
            ([position, id, deleted, payload]): ProjectionChange => ({
              position: position as number,
              entity,
              id: id as string,
              live: deleted === 0,
              payload: JSON.parse(payload as string) as Record<string, unknown>,
            }),
          ),
        ),
      )
      .deferred();
    return rows.sort((a, b) => a.position - b.position || compare(a.entity, b.entity) || compare(a.id, b.id));
  }

  get(entity: EntityName, id: string, options?: ReadOptions): StoredRecord | null {
    return this.refresh()?.get(entity, id, options) ?? null;
  }
  getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions): StoredRecord[] {
    return this.refresh()?.getMany(entity, ids, options) ?? [];
  }
  findBy(entity: EntityName, field: string, value: string, options: PageOptions): StoredRecord[] {
    return this.refresh()?.findBy(entity, field, value, options) ?? [];
  }
  findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): StoredRecord[] {
    return this.refresh()?.findByAny(entity, field, values, options) ?? [];
  }
  list(entity: EntityName, options: PageOptions): StoredRecord[] {
    return this.refresh()?.list(entity, options) ?? [];
  }
  query(plan: PlannedQuery): QueryPage {
    return this.refresh()?.query(plan) ?? { records: [], totalCount: 0, cursors: [], hasNextPage: false };
  }

  close(): void {
    this.db?.close();
    this.db = null;
    this.tables = null;
  }
}
