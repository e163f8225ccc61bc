/** Rows of answers a memo keeps; past it, it starts over empty. */
export const READ_MEMO_ROWS = 20_000;

/**
 * The answers of current reads of one read-only SQLite file, handed out again while nobody committed
 * to the file: before every read it asks SQLite's `PRAGMA data_version` (through `version`), which
 * changes whenever another connection, in any process, commits, and forgets every answer when it
 * moved. An answer is always read after the look it is kept under, so a write acknowledged before a
 * read began is never hidden from it. Answers are shared between callers, which must not change them.
 * Why it is kept: docs/decisions/0002-read-memo.md.
 */
export class ReadMemo {
  private answers = new Map<string, unknown>();
  private rows = 0;
  private seen: unknown;

  constructor(
    private readonly version: () => unknown,
    private readonly maxRows = READ_MEMO_ROWS,
  ) {}

  /** The answer kept under `key`, or `read()`'s (kept when it fits), after a look at the file's version. */
  answer<T>(key: string, read: () => T, rowsOf: (answer: T) => number): T {
    const version = this.version();
    if (version !== this.seen) {
      this.seen = version;
      this.clear();
    } else if (this.answers.has(key)) {
      return this.answers.get(key) as T;
    }
    const answer = read();
    const rows = Math.max(1, rowsOf(answer));
    if (this.rows + rows > this.maxRows) this.clear();
    if (rows <= this.maxRows) {
      this.answers.set(key, answer);
      this.rows += rows;
    }
    return answer;
  }

  private clear(): void {
    this.answers = new Map();
    this.rows = 0;
  }
}
