import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type EntityName, entities } from '@eggmesh/schema';
import {
  type AggregateGroup,
  type AggregateOptions,
  type PageOptions,
  type ProjectionChange,
  planAggregate,
  planQuery,
  type QueryOptions,
  type QueryPage,
  type ReadOptions,
  type ReadStore,
  type RelationPageOptions,
  type StoredRecord,
} from '@eggmesh/store';
import { ChangeSignal } from './change-signal.js';
import { openPrimaryStore, SqlitePrimaryStore } from './primary-store.js';
import { ProjectionReader } from './projection-store.js';
import { ReadMemo } from './read-memo.js';

/** How long a read side keeps watching its files after the last read that waited for a position. */
const WATCH_AFTER_WAIT_MS = 30_000;

/** Where the embedded tier keeps its files inside the data directory. */
export function dataFiles(dataDir: string) {
  return { primary: join(dataDir, 'primary.db'), projectionsDir: join(dataDir, 'projections') } as const;
}

/**
 * Reads every entity: actors and events from the primary file, projections from the current
 * projection generation. The read service opens it read-only; the write service passes its own primary.
 */
export class SqliteReadStore implements ReadStore {
  /** Wakes `changed()` waiters: the primary's files, CURRENT and the generation files change on commits. */
  private readonly changes: ChangeSignal;
  /** The change count when positions were last read: a change after it ends the next `changed()` at once. */
  private seen = 0;
  /** Current-read answers of the primary and of the projections, each kept while its file is unchanged. */
  private readonly memos: { readonly primary: ReadMemo | undefined; readonly projections: ReadMemo };

  constructor(
    readonly primary: SqlitePrimaryStore,
    readonly projections: ProjectionReader,
  ) {
    // `data_version` moves on other connections' commits only: a writable primary (the write-api's
    // own) is read without a memo.
    const primaryVersion = primary.db.prepare('PRAGMA data_version').pluck();
    this.memos = {
      primary: primary.db.readonly ? new ReadMemo(() => primaryVersion.get()) : undefined,
      projections: new ReadMemo(() => projections.version()),
    };
    // Watched only while reads wait for a position: a read side is otherwise woken by every commit.
    this.changes = new ChangeSignal(
      [primary.file, join(projections.dir, 'CURRENT'), join(projections.dir, 'gen-')],
      { watchWhileWaitedMs: WATCH_AFTER_WAIT_MS },
    );
  }

  private source(entity: EntityName) {
    return entities[entity].kind === 'projection' ? this.projections : this.primary.sync;
  }

  /** The log position the entity tables reflect (the replica is the primary's file itself). */
  async replicaPosition(): Promise<number> {
    this.seen = this.changes.version;
    return this.primary.headSync();
  }

  /** The log position the projections reflect. */
  async projectionPosition(): Promise<number> {
    this.seen = this.changes.version;
    return this.projections.checkpoint();
  }

  /**
   * Resolves on the next change to the primary or the projections (inotify on their directories), at
   * once when one landed since positions were last read, or after `timeoutMs` / on abort.
   */
  changed(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.changes.next(this.seen, timeoutMs, signal);
  }

  async projectionChanges(after: number, through: number): Promise<ProjectionChange[]> {
    return this.projections.changes(after, through);
  }

  async ping(): Promise<void> {
    await this.primary.ping();
    this.projections.checkpoint();
  }

  /** `read()`'s answer; for a current read (no `at`), from the entity's file's memo. */
  private memoized<T extends StoredRecord | StoredRecord[] | null>(
    entity: EntityName,
    at: number | undefined,
    key: readonly unknown[],
    read: () => T,
  ): T {
    const memo = entities[entity].kind === 'projection' ? this.memos.projections : this.memos.primary;
    if (at !== undefined || memo === undefined) return read();
    return memo.answer(JSON.stringify([entity, ...key]), read, (answer) =>
      Array.isArray(answer) ? answer.length : 1,
    );
  }

  async get(entity: EntityName, id: string, options?: ReadOptions) {
    return this.memoized(entity, options?.at, ['get', id], () =>
      this.source(entity).get(entity, id, options),
    );
  }
  async getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions) {
    return this.memoized(entity, options?.at, ['getMany', ids], () =>
      this.source(entity).getMany(entity, ids, options),
    );
  }
  async findBy(entity: EntityName, field: string, value: string, options: PageOptions) {
    return this.memoized(entity, options.at, ['findBy', field, value, options.limit, options.after], () =>
      this.source(entity).findBy(entity, field, value, options),
    );
  }
  async findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ) {
    return this.memoized(
      entity,
      options?.at,
      ['findByAny', field, values, options?.limit, options?.after],
      () => this.source(entity).findByAny(entity, field, values, options),
    );
  }
  async list(entity: EntityName, options: PageOptions) {
    return this.memoized(entity, options.at, ['list', options.limit, options.after], () =>
      this.source(entity).list(entity, options),
    );
  }

  async query(entity: EntityName, options: QueryOptions): Promise<QueryPage> {
    return this.source(entity).query(planQuery(entity, options));
  }

  async aggregate(entity: EntityName, options: AggregateOptions): Promise<AggregateGroup[]> {
    // Aggregates are over events, which the primary holds.
    return this.primary.sync.aggregate(planAggregate(entity, options));
  }

  async close(): Promise<void> {
    this.changes.close();
    this.projections.close();
    await this.primary.close();
  }
}

/** Opens the data directory for reading only: this handle cannot write. */
export function openReadStore(dataDir: string): SqliteReadStore {
  const files = dataFiles(dataDir);
  return new SqliteReadStore(
    new SqlitePrimaryStore({ file: files.primary, readonly: true }),
    new ProjectionReader(files.projectionsDir),
  );
}

/**
 * Opens the primary of `dataDir` read-only, waiting (with one message to `say`) until the write
 * service has created it. For consumers of the log (the projector, its rebuild).
 */
export async function openPrimaryWhenCreated(
  dataDir: string,
  say: (message: string) => void,
  signal?: AbortSignal,
): Promise<SqlitePrimaryStore> {
  const file = dataFiles(dataDir).primary;
  let told = false;
  for (;;) {
    if (existsSync(file)) {
      try {
        return openPrimaryStore({ file, readonly: true });
      } catch (error) {
        // The write-api creates the file before its tables: a read-only open in between finds no
        // tables (SQLITE_ERROR "no such table"). Wait for them like for the file.
        if (!/no such table/i.test((error as Error).message)) throw error;
      }
    }
    if (!told) say(`waiting for ${file}: start the write-api first`);
    told = true;
    await sleep(200, undefined, signal ? { signal } : undefined);
  }
}
