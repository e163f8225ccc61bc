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
 * The answers of current reads on one read-only connection, reused while the database is unchanged.
 * SQLite's `PRAGMA data_version` changes whenever another connection commits to the database, and
 * reading it starts a read transaction like any statement does, so a look at it before each read tells
 * whether an answer stored since the last look is still what the statement would return: when the
 * version moved, every answer is dropped (whatever the commit touched). An answer that is kept was read
 * at or after the version it is filed under, never before, so no write another process acknowledged
 * before the look is ever hidden. Answers are shared between callers, who must not mutate them (the
 * records in them are frozen). Bounded by rows and by JSON text; the oldest answers go first.
 */
export class ReadMemo {
  private readonly dataVersion: Statement;
  private version: unknown;
  private readonly answers = new Map<string, Answer>();
  private rows = 0;
  private bytes = 0;
  /** Answers served from here and reads that went to SQLite (diagnostics and tests). */
  hits = 0;
  misses = 0;

  constructor(
    db: SqliteDatabase,
    private readonly maxRows = READ_MEMO_ROWS,
    private readonly maxBytes = READ_MEMO_TEXT_BYTES,
  ) {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
  }

  /**
   * The stored answer of `key`, after dropping every answer when the database changed since the last
   * look; undefined when there is none (read it, then `set` it).
   */
  get<T>(key: string): T | undefined {
    const version = this.dataVersion.get();
    if (version !== this.version) {
      this.version = version;
      this.clear();
    }
    const answer = this.answers.get(key);
    if (answer === undefined) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    return answer.value as T;
  }

  /** Files the answer of `key` read just after `get(key)` missed: `rows` records, `bytes` of text. */
  set(key: string, value: unknown, records: number, bytes = 0): void {
    // An empty answer counts as a row: many of them must not pile up unbounded either.
    const rows = Math.max(1, records);
    if (rows > this.maxRows || bytes > this.maxBytes) return;
    const known = this.answers.get(key);
    if (known !== undefined) {
      this.answers.delete(key);
      this.rows -= known.rows;
      this.bytes -= known.bytes;
    }
    this.answers.set(key, { value, rows, bytes });
    this.rows += rows;
    this.bytes += bytes;
    for (const [oldest, answer] of this.answers) {
      if (this.rows <= this.maxRows && this.bytes <= this.maxBytes) break;
      this.answers.delete(oldest);
      this.rows -= answer.rows;
      this.bytes -= answer.bytes;
    }
  }

  clear(): void {
    this.answers.clear();
    this.rows = 0;
    this.bytes = 0;
  }

  /** Answers, rows and text bytes held. */
  get size(): { readonly answers: number; readonly rows: number; readonly bytes: number } {
    return { answers: this.answers.size, rows: this.rows, bytes: this.bytes };
  }
}
