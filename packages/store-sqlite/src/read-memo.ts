import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';

/** How many rows a read-only store keeps answers of, by default. */
export const READ_MEMO_ROWS = 20_000;
/** How much JSON list text it keeps, by default. */
export const READ_MEMO_TEXT_BYTES = 8 * 1024 * 1024;

interface Answer {
  readonly value: unknown;
  readonly rows: number;
  readonly bytes: number;
}

/**
 * Which entities the commits after `position` touched, and the position they reach (with `position`
 * undefined: none, and the position now): how a database
 * that logs every change (the primary's event log, written in each commit's transaction) tells a memo
 * what to drop instead of everything.
 */
export type ChangeFeed = (position: number | undefined) => {
  readonly position: number;
  readonly entities: Iterable<string>;
};

/**
 * The answers of current reads on one read-only connection, reused while what they were read from is
 * unchanged. SQLite's `PRAGMA data_version` changes whenever another connection commits to the
 * database, and reading it starts a read transaction like any statement does, so a look at it before
 * each read tells whether any answer may be stale. When it moved, the memo drops the answers of the
 * entities the change feed names (every answer is about one entity's rows), or every answer when there
 * is no feed. The feed is read after the version, so a commit landing in between is dropped now or
 * at the next look, and an answer is always read after the look it is filed under: no write another
 * process acknowledged before a read is ever hidden from it. Answers are shared between callers, who
 * must not mutate them (the records in them are frozen). Bounded by rows and by JSON text; the oldest
 * answers go first.
 */
export class ReadMemo {
  private readonly dataVersion: Statement;
  private version: unknown;
  /** Where the feed was last read; undefined until the first look (everything is dropped then). */
  private position: number | undefined;
  private readonly answers = new Map<string, Map<string, Answer>>();
  private rows = 0;
  private bytes = 0;
  /** Answers served from here and reads that went to SQLite (diagnostics and tests). */
  hits = 0;
  misses = 0;

  constructor(
    db: SqliteDatabase,
    private readonly feed?: ChangeFeed,
    private readonly maxRows = READ_MEMO_ROWS,
    private readonly maxBytes = READ_MEMO_TEXT_BYTES,
  ) {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
  }

  /**
   * The stored answer of `key` about `entity`'s rows, after dropping what changed since the last look;
   * undefined when there is none (read it, then `set` it).
   */
  get<T>(entity: string, key: string): T | undefined {
    const version = this.dataVersion.get();
    if (version !== this.version) {
      this.version = version;
      this.dropChanged();
    }
    const answer = this.answers.get(entity)?.get(key);
    if (answer === undefined) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    return answer.value as T;
  }

  private dropChanged(): void {
    if (this.feed === undefined || this.position === undefined) {
      this.clear();
      if (this.feed !== undefined) this.position = this.feed(undefined).position;
      return;
    }
    const changes = this.feed(this.position);
    for (const entity of changes.entities) this.drop(entity);
    this.position = Math.max(this.position, changes.position);
  }

  private drop(entity: string): void {
    const answers = this.answers.get(entity);
    if (answers === undefined) return;
    for (const answer of answers.values()) {
      this.rows -= answer.rows;
      this.bytes -= answer.bytes;
    }
    this.answers.delete(entity);
  }

  /**
   * Files the answer of `key` about `entity`, read just after `get` missed it: `records` rows,
   * `bytes` of text.
   */
  set(entity: string, key: string, value: unknown, records: number, bytes = 0): void {
    // An empty answer counts as a row: many of them must not pile up unbounded either.
    const rows = Math.max(1, records);
    if (rows > this.maxRows || bytes > this.maxBytes) return;
    let answers = this.answers.get(entity);
    if (answers === undefined) {
      answers = new Map();
      this.answers.set(entity, answers);
    }
    const known = answers.get(key);
    if (known !== undefined) {
      answers.delete(key);
      this.rows -= known.rows;
      this.bytes -= known.bytes;
    }
    answers.set(key, { value, rows, bytes });
    this.rows += rows;
    this.bytes += bytes;
    if (this.rows > this.maxRows || this.bytes > this.maxBytes) this.evict(answers);
  }

  /** Drops the oldest answers (of `first`'s entity first, then of the others) until within bounds. */
  private evict(first: Map<string, Answer>): void {
    for (const answers of [first, ...this.answers.values()]) {
      for (const [key, answer] of answers) {
        if (this.rows <= this.maxRows && this.bytes <= this.maxBytes) return;
        answers.delete(key);
        this.rows -= answer.rows;
        this.bytes -= answer.bytes;
      }
    }
  }

  clear(): void {
    this.answers.clear();
    this.rows = 0;
    this.bytes = 0;
  }

  /** Answers, rows and text bytes held. */
  get size(): { readonly answers: number; readonly rows: number; readonly bytes: number } {
    let answers = 0;
    for (const map of this.answers.values()) answers += map.size;
    return { answers, rows: this.rows, bytes: this.bytes };
  }
}
