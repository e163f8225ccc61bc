import {
  closeSync,
  existsSync,
  fsyncSync,
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
  type ProjectionCommit,
  type ProjectionDocument,
  type ProjectionKeys,
  type ProjectionStateRow,
  type ProjectionStore,
  type ProjectionWrite,
  projectionKey,
  type ReadOptions,
  type RelationPageOptions,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
} from '@eggmesh/store';
import type { Statement } from 'better-sqlite3';
import { backgroundCheckpointer, type WalCheckpointer } from './checkpointer.js';
import { openDatabase, type SqliteDatabase, type Synchronous } from './database.js';
import { type ChangeFeed, numberedChangeFeed } from './read-memo.js';
import { tableNames, type VersionInsert, VersionTables, VersionTablesReader } from './version-tables.js';

export const projectionEntities: readonly EntityName[] = entityNames.filter(
  (e) => entities[e].kind === 'projection',
);

const STATE_DDL = `
CREATE TABLE IF NOT EXISTS projector_state (
  kind TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, ref TEXT,
  PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS projector_state_ref ON projector_state (kind, ref);
CREATE TABLE IF NOT EXISTS projector_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO projector_meta (key, value) VALUES ('checkpoint', 0);`;

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

interface LatestRow {
  id: string;
  deleted: number;
  payload: string | null;
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

const byId = (a: { readonly id: string }, b: { readonly id: string }): number =>
  a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

interface StateRow {
  kind: string;
  id: string;
  value: string;
  ref: string | null;
}

const toStateRow = (row: StateRow): ProjectionStateRow => ({
  kind: row.kind,
  id: row.id,
  ref: row.ref,
  value: JSON.parse(row.value) as Record<string, unknown>,
});

export interface ProjectionStoreOptions {
  /** The projections directory (holds CURRENT and the generation files). */
  readonly dir: string;
  /** Open this generation instead of the current one (rebuilds write a new generation). */
  readonly generation?: string;
  readonly synchronous?: Synchronous;
  /** Leave the current tables empty until `finishDeferredCurrent()` (for a generation nobody reads yet). */
  readonly deferCurrent?: boolean;
  /**
   * Build a generation nobody reads yet: no journal on disk and no fsync per commit, a large page
   * cache, until `finishBulk()` makes it durable and an ordinary
   * WAL database. A crash before that leaves a file that was never promoted (the next rebuild removes it).
   */
  readonly bulk?: boolean;
}

/** Page cache of a bulk build (KiB, as SQLite's negative `cache_size`): the indexes of a large generation. */
const BULK_CACHE_KIB = 512 * 1024;

/** The projector's writable store over one generation file. */
export class SqliteProjectionStore extends VersionTablesReader implements ProjectionStore {
  readonly db: SqliteDatabase;
  readonly generation: string;
  protected readonly tables: VersionTables;
  private readonly synchronous: Synchronous;
  private readonly putState: Statement;
  private readonly stateMany: Statement;
  private readonly byRefMany: Statement;
  private readonly latestStatements = new Map<EntityName, Statement>();
  private readonly readCheckpoint: Statement;
  private readonly writeCheckpoint: Statement;
  private readonly commitTx: (batch: ProjectionCommit) => void;
  /** Copies the WAL into the file off the event loop (none while a bulk build has no WAL). */
  private walCheckpointer: WalCheckpointer | undefined;
  get checkpointer(): WalCheckpointer | undefined {
    return this.walCheckpointer;
  }

  constructor(
    readonly dir: string,
    generation: string,
    synchronous?: Synchronous,
    private deferCurrent = false,
    private bulk = false,
  ) {
    super();
    this.generation = generation;
    this.db = openDatabase(join(dir, generation), synchronous ? { synchronous } : {});
    this.synchronous = synchronous ?? 'normal';
    if (bulk) {
      // The journal stays in memory (a failed transaction still rolls back); nothing is fsynced.
      this.db.pragma('journal_mode = MEMORY');
      this.db.pragma('synchronous = OFF');
      this.db.pragma(`cache_size = -${BULK_CACHE_KIB}`);
    } else {
      this.walCheckpointer = backgroundCheckpointer(this.db, join(dir, generation), { synchronous });
    }
    this.db.exec(VersionTables.ddl(projectionEntities) + STATE_DDL);
    this.tables = new VersionTables(this.db, projectionEntities, true);
    this.stateMany = this.db.prepare(
      'SELECT * FROM projector_state WHERE kind = ? AND id IN (SELECT value FROM json_each(?))',
    );
    this.byRefMany = this.db.prepare(
      'SELECT * FROM projector_state WHERE kind = ? AND ref IN (SELECT value FROM json_each(?)) ORDER BY id',
    );
    this.putState = this.db.prepare(
      'INSERT OR REPLACE INTO projector_state (kind, id, value, ref) VALUES (?, ?, ?, ?)',
    );
    this.readCheckpoint = this.db
      .prepare("SELECT value FROM projector_meta WHERE key = 'checkpoint'")
      .pluck();
    this.writeCheckpoint = this.db.prepare("UPDATE projector_meta SET value = ? WHERE key = 'checkpoint'");
    this.commitTx = this.db.transaction((batch: ProjectionCommit) => {
      const at = this.readCheckpoint.get() as number;
      if (at !== batch.expectedCheckpoint) {
        throw new StoreError(
          storeErrorCodes.CONFLICT,
          `checkpoint moved to ${at} while a batch from ${batch.expectedCheckpoint} was being applied`,
        );
      }
      // Every version is kept (so `at` reads are exact), appended per entity in log order (a version's
      // seq orders it only among its own id's); the current table needs only each id's last.
      const byEntity = new Map<EntityName, VersionInsert[]>();
      const last = new Map<string, { doc: ProjectionWrite; json: string }>();
      for (const doc of batch.documents) {
        const json = doc.json ?? JSON.stringify(doc.payload);
        let rows = byEntity.get(doc.entity);
        if (!rows) {
          rows = [];
          byEntity.set(doc.entity, rows);
        }
        rows.push({ id: doc.id, createdAt: doc.createdAt, payload: json, live: doc.live });
        if (!this.deferCurrent) last.set(`${doc.entity}\u0000${doc.id}`, { doc, json });
      }
      // In id order (a stable sort keeps each id's versions in log order): consecutive inserts land on
      // neighbouring pages of the (id, created_at) index instead of random ones.
      for (const [entity, rows] of byEntity) this.tables.appendVersions(entity, rows.sort(byId));
      for (const { doc, json } of last.values()) {
        this.tables.setCurrent(doc.entity, doc.id, doc.createdAt, json, doc.live);
      }
      for (const row of batch.state) {
        this.putState.run(row.kind, row.id, JSON.stringify(row.value), row.ref);
      }
      this.writeCheckpoint.run(batch.checkpoint);
    }).immediate;
  }

  /**
   * Fills the current tables from the versions in one pass and maintains them per batch from then on.
   * A rebuild defers them: one set-based fill at the end costs far less than an upsert per batch.
   */
  finishDeferredCurrent(): void {
    if (!this.deferCurrent) return;
    this.db
      .transaction(() => {
        for (const entity of projectionEntities) {
          const { versions, current } = tableNames(entity);
          // Each id's newest version, found in one ordered pass over the (id, created_at) index (with a
          // single max(), SQLite takes the bare `seq` from the row holding the max), rows fetched by seq.
          this.db.exec(`DELETE FROM ${current};
          INSERT INTO ${current} (id, created_at, payload)
          SELECT v.id, v.created_at, v.payload
          FROM (SELECT max(created_at) AS newest, seq FROM ${versions} GROUP BY id) n
          JOIN ${versions} v ON v.seq = n.seq
          WHERE v.deleted = 0`);
        }
      })
      .immediate();
    this.deferCurrent = false;
  }

  /**
   * Ends a bulk build: the file goes back to WAL with the configured synchronous level and is fsynced,
   * so what was built survives a power cut before anyone is pointed at it. Call before promoting.
   */
  finishBulk(): void {
    if (!this.bulk) return;
    // Switching needs the file to itself for a moment (busy_timeout waits for a passing reader); a
    // generation left in rollback mode would make readers and the projector block each other.
    const mode = this.db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`${this.generation} stayed in journal mode ${String(mode)}, not WAL`);
    this.db.pragma(`synchronous = ${this.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    this.db.pragma('cache_size = -65536');
    this.walCheckpointer = backgroundCheckpointer(this.db, join(this.dir, this.generation), {
      synchronous: this.synchronous,
    });
    const fd = openSync(join(this.dir, this.generation), 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.bulk = false;
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
    return this.loadTx(keys);
  }

  private loadTx(keys: ProjectionKeys): LoadedProjections {
    return this.db
      .transaction(() => {
        const documents = new Map<string, ProjectionDocument>();
        for (const [entity, ids] of groupBy(
          keys.documents,
          (k) => k.entity,
          (k) => k.id,
        )) {
          for (const row of this.latestMany(entity).all(JSON.stringify(ids)) as LatestRow[]) {
            if (row.payload === null) continue;
            documents.set(projectionKey(entity, row.id), {
              id: row.id,
              live: row.deleted === 0,
              payload: JSON.parse(row.payload) as Record<string, unknown>,
            });
          }
        }
        const state = new Map<string, ProjectionStateRow>();
        for (const [kind, ids] of groupBy(
          keys.state,
          (k) => k.kind,
          (k) => k.id,
        )) {
          for (const row of this.stateMany.all(kind, JSON.stringify(ids)) as StateRow[]) {
            state.set(projectionKey(kind, row.id), toStateRow(row));
          }
        }
        const stateByRef = new Map<string, ProjectionStateRow[]>();
        for (const [kind, refs] of groupBy(
          keys.stateByRef,
          (k) => k.kind,
          (k) => k.ref,
        )) {
          for (const ref of refs) stateByRef.set(projectionKey(kind, ref), []);
          for (const row of this.byRefMany.all(kind, JSON.stringify(refs)) as StateRow[]) {
            if (row.ref !== null) stateByRef.get(projectionKey(kind, row.ref))?.push(toStateRow(row));
          }
        }
        return { checkpoint: this.checkpointSync(), documents, state, stateByRef };
      })
      .deferred();
  }

  private latestMany(entity: EntityName): Statement {
    let statement = this.latestStatements.get(entity);
    if (!statement) {
      const { versions } = tableNames(entity);
      // Each id's newest version (live or a tombstone): one descending seek of the (id, created_at) index.
      statement = this.db.prepare(
        `SELECT v.id, v.deleted, v.payload FROM json_each(?) j JOIN ${versions} v
         ON v.seq = (SELECT w.seq FROM ${versions} w WHERE w.id = j.value ORDER BY w.created_at DESC LIMIT 1)`,
      );
      this.latestStatements.set(entity, statement);
    }
    return statement;
  }

  async commit(batch: ProjectionCommit): Promise<void> {
    this.commitTx(batch);
    this.walCheckpointer?.committed();
  }

  async close(): Promise<void> {
    await this.walCheckpointer?.close();
    if (this.db.open) this.db.close();
  }
}

export type { ProjectionWrite };

/** Opens the current generation for writing, creating the first one when the directory is new. */
export function openProjectionStore(options: ProjectionStoreOptions): SqliteProjectionStore {
  let generation = options.generation ?? currentGeneration(options.dir);
  const fresh = generation === null;
  generation ??= newGenerationName();
  const store = new SqliteProjectionStore(
    options.dir,
    generation,
    options.synchronous,
    options.deferCurrent,
    options.bulk,
  );
  if (fresh) promoteGeneration(options.dir, generation);
  return store;
}

/**
 * What the projector changed in a generation, from its version rows: every document write appends one,
 * or replaces the newest of its id written at the same time. Version rows are never deleted, and SQLite
 * numbers a new row above every existing one, even the row its REPLACE then deletes (the memo spec
 * replaces the row with the highest `seq` and checks the change is seen), so the rows past the last
 * `seq` a look saw are exactly the documents written since.
 */
function generationChangeFeed(db: SqliteDatabase): ChangeFeed {
  return numberedChangeFeed(
    projectionEntities.map((entity) => {
      const { versions } = tableNames(entity);
      const since = db
        .prepare(`SELECT seq, '${entity}', id FROM ${versions} WHERE seq > ? ORDER BY seq LIMIT ?`)
        .raw(true);
      const head = db.prepare(`SELECT coalesce(max(seq), 0) FROM ${versions}`).pluck();
      return {
        after: (position: number, limit: number) =>
          since.all(position, limit) as Array<[number, string, string]>,
        head: () => head.get() as number,
      };
    }),
  );
}

/**
 * Read-only access to whichever generation is current: a rebuild that promotes a new
 * generation is picked up within `recheckMs`, without a restart.
 */
export class ProjectionReader {
  private db: SqliteDatabase | null = null;
  private tables: VersionTables | null = null;
  private checkpointStatement: Statement | null = null;
  private generation: string | null = null;
  private currentMtime = 0;
  private checkedAt = -Infinity;

  constructor(
    readonly dir: string,
    private readonly recheckMs = 250,
    /** Rows of current-read answers each generation's tables keep while unchanged (0: none). */
    private readonly memoRows?: number,
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
      this.tables = new VersionTables(
        db,
        projectionEntities,
        false,
        'inline',
        generationChangeFeed(db),
        this.memoRows,
      );
      this.checkpointStatement = db
        .prepare("SELECT value FROM projector_meta WHERE key = 'checkpoint'")
        .pluck();
    }
    this.currentMtime = mtime;
    return this.tables;
  }

  /** The position the projections reflect (0 before the projector's first batch). */
  checkpoint(): number {
    this.refresh();
    return (this.checkpointStatement?.get() as number | undefined) ?? 0;
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

  close(): void {
    this.db?.close();
    this.db = null;
    this.tables = null;
  }
}
