import type { Statement } from 'better-sqlite3';
import { AgedMap, dropOldest, SecondSight } from './aged-map.js';
import type { SqliteDatabase } from './database.js';
import { WalIndexHeader } from './wal-index.js';

/** How many rows a read-only store keeps answers of, by default. */
export const READ_MEMO_ROWS = 20_000;
/** How much JSON list text it keeps, by default. */
export const READ_MEMO_TEXT_BYTES = 8 * 1024 * 1024;

/** What other connections changed: per entity, the ids of the rows they wrote. */
export type Changes = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * Tells a memo what the commits since its last call changed, so that it drops only those answers:
 * a database that records every change (the primary's event log, a generation's version rows, each
 * written in the commit's own transaction) can say so. `undefined`: it cannot say (the first call, or
 * too much changed to list), and the memo drops everything.
 */
export interface ChangeFeed {
  next(): Changes | undefined;
}

/** More changed rows than this since the last look: a feed says "everything" instead of listing them. */
export const FEED_MAX_ROWS = 4096;

interface Answer {
  readonly value: unknown;
  readonly rows: number;
  readonly bytes: number;
  /** The only rows the answer depends on (a read by id); undefined: any row of its entity. */
  readonly ids: readonly string[] | undefined;
}

/** One entity's answers, and which of them depend on which ids. */
class EntityAnswers {
  readonly answers = new AgedMap<string, Answer>();
  /** Keys of the answers that depend on any row of the entity (lists, reads by a field). */
  readonly wide = new Set<string>();
  /** Keys of the answers that depend on a given id. */
  readonly byId = new Map<string, Set<string>>();
}

/**
 * The answers of current reads on one read-only connection, reused while what they were read from is
 * unchanged. SQLite's `PRAGMA data_version` changes whenever another connection commits to the
 * database, and reading it starts a read transaction like any statement does, so a look at it before
 * each read tells whether any answer may be stale. The look is skipped when the wal-index header in
 * the `-shm` file is byte for byte the one read just before the last look (`WalIndexHeader`): every
 * commit rewrites it before it returns. When it moved, the memo asks its change feed what
 * changed and drops the answers that depend on it: those about a changed id, and every list or
 * field read of a changed entity; without a feed, or when the feed cannot say, every answer. The feed
 * is read after the version, so a commit landing in between is dropped now or at the next look, and an
 * answer is always read after the look it is filed under: no write another process acknowledged before
 * a read began is ever hidden from it. Answers are shared between callers, who must not mutate them
 * (the records in them are frozen). Bounded by rows and by JSON text; the oldest answers go first, and
 * once full an answer is kept only from the second read of its key (`SecondSight`): on a table many
 * times the bounds, random reads would otherwise churn the memo and keep nothing useful.
 */
export class ReadMemo {
  private readonly dataVersion: Statement;
  private version: unknown;
  /** Tells, without a lock, that nothing was committed since the last look (see `WalIndexHeader`). */
  private readonly header: WalIndexHeader | undefined;
  private readonly entities = new Map<string, EntityAnswers>();
  private rows = 0;
  private bytes = 0;
  private readonly admission = new SecondSight<string, string>();
  /** Answers served from here, reads that went to SQLite, looks at the data version (diagnostics and tests). */
  hits = 0;
  misses = 0;
  looks = 0;

  constructor(
    db: SqliteDatabase,
    private readonly feed?: ChangeFeed,
    private readonly maxRows = READ_MEMO_ROWS,
    private readonly maxBytes = READ_MEMO_TEXT_BYTES,
  ) {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.header = db.memory ? undefined : new WalIndexHeader(db.name);
  }

  /**
   * The stored answer of `key` about `entity`'s rows, after dropping what changed since the last look;
   * undefined when there is none (read it, then `set` it).
   */
  get<T>(entity: string, key: string): T | undefined {
    this.refresh();
    const answer = this.entities.get(entity)?.answers.get(key);
    if (answer === undefined) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    return answer.value as T;
  }

  /**
   * What a read does first: a look when a commit moved the wal-index header since the last one. Called
   * ahead of the reads too (`SqliteReadStore.refresh`), so that a read after a write finds it done.
   */
  refresh(): void {
    if (!this.header?.unchanged()) this.look();
  }

  /**
   * Reads the data version (a read transaction: a lock taken and released on the `-shm` file) and,
   * when it moved, drops what changed. Called after the header was read, so a commit landing in
   * between changes the header again and is looked at by the next read.
   */
  private look(): void {
    this.looks += 1;
    try {
      const version = this.dataVersion.get();
      if (version !== this.version) {
        this.version = version;
        this.dropChanged();
      }
    } catch (error) {
      this.header?.forget();
      throw error;
    }
  }

  /** Lets go of the `-shm` file descriptor (when the connection closes). */
  close(): void {
    this.header?.close();
  }

  private dropChanged(): void {
    const changes = this.feed?.next();
    if (changes === undefined) {
      this.clear();
      return;
    }
    for (const [entity, ids] of changes) {
      const of = this.entities.get(entity);
      if (of === undefined) continue;
      for (const key of [...of.wide]) this.drop(of, key);
      for (const id of ids) {
        const keys = of.byId.get(id);
        if (keys !== undefined) for (const key of [...keys]) this.drop(of, key);
      }
    }
  }

  private drop(of: EntityAnswers, key: string): void {
    const answer = of.answers.get(key);
    if (answer === undefined) return;
    of.answers.delete(key);
    this.rows -= answer.rows;
    this.bytes -= answer.bytes;
    if (answer.ids === undefined) {
      of.wide.delete(key);
      return;
    }
    for (const id of answer.ids) {
      const keys = of.byId.get(id);
      keys?.delete(key);
      if (keys?.size === 0) of.byId.delete(id);
    }
  }

  /**
   * Files the answer of `key` about `entity`, read just after `get` missed it: `records` rows, `bytes`
   * of text; `ids` when the answer depends only on those rows (a read by id).
   */
  set(
    entity: string,
    key: string,
    value: unknown,
    records: number,
    bytes = 0,
    ids?: readonly string[],
  ): void {
    // An empty answer counts as a row: many of them must not pile up unbounded either.
    const rows = Math.max(1, records);
    if (rows > this.maxRows || bytes > this.maxBytes) return;
    let of = this.entities.get(entity);
    if (of === undefined) {
      of = new EntityAnswers();
      this.entities.set(entity, of);
    }
    this.drop(of, key);
    const over = () => this.rows + rows > this.maxRows || this.bytes + bytes > this.maxBytes;
    if (over()) {
      if (!this.admission.again(entity, key)) return;
      // Room first, so the new answer is never the oldest of its entity, dropped at once.
      this.evict(of, over);
    }
    of.answers.set(key, { value, rows, bytes, ids });
    if (ids === undefined) of.wide.add(key);
    else {
      for (const id of ids) {
        let keys = of.byId.get(id);
        if (keys === undefined) {
          keys = new Set();
          of.byId.set(id, keys);
        }
        keys.add(key);
      }
    }
    this.rows += rows;
    this.bytes += bytes;
  }

  /** Drops the oldest answers (of `first`'s entity first, then of the others) while `over()`. */
  private evict(first: EntityAnswers, over: () => boolean): void {
    dropOldest(
      [first, ...this.entities.values()],
      (of) => of.answers,
      over,
      (of, key) => this.drop(of, key),
    );
  }

  clear(): void {
    this.entities.clear();
    this.rows = 0;
    this.bytes = 0;
  }

  /** Answers, rows and text bytes held. */
  get size(): { readonly answers: number; readonly rows: number; readonly bytes: number } {
    let answers = 0;
    for (const of of this.entities.values()) answers += of.answers.size;
    return { answers, rows: this.rows, bytes: this.bytes };
  }
}

/**
 * A change feed over rows numbered in commit order (the primary's log positions, a generation's
 * version `seq`s): `after(position, limit)` lists `[number, entity, id]` of the rows past `position`
 * in order, `head()` the highest number now.
 */
export function numberedChangeFeed(
  sources: readonly {
    readonly after: (position: number, limit: number) => ReadonlyArray<readonly [number, string, string]>;
    readonly head: () => number;
  }[],
): ChangeFeed {
  let positions: number[] | undefined;
  return {
    next() {
      if (positions === undefined) {
        positions = sources.map((s) => s.head());
        return undefined;
      }
      const changes = new Map<string, Set<string>>();
      for (let i = 0; i < sources.length; i++) {
        const source = sources[i]!;
        const rows = source.after(positions[i]!, FEED_MAX_ROWS + 1);
        if (rows.length > FEED_MAX_ROWS) {
          // Too much to list: everything goes, and the feed starts again from the heads now.
          positions = sources.map((s) => s.head());
          return undefined;
        }
        for (const [position, entity, id] of rows) {
          let ids = changes.get(entity);
          if (ids === undefined) {
            ids = new Set();
            changes.set(entity, ids);
          }
          ids.add(id);
          if (position > positions[i]!) positions[i] = position;
        }
      }
      return changes;
    },
  };
}
