import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * One statement for the thread: its SQL, its positional parameters and, for a write, how many rows it
 * must change (the transaction fails and rolls back otherwise).
 */
export type ThreadStatement = readonly [sql: string, params: readonly unknown[], expectedChanges?: number];

type Request =
  | { readonly kind: 'exec'; readonly prepare: string[]; readonly sql: string }
  | { readonly kind: 'write' | 'read'; readonly prepare: string[]; readonly ops: unknown[][] }
  | { readonly kind: 'close'; readonly prepare: string[] };
type Reply = { readonly rows?: unknown[][][] } | { readonly error: string; readonly code?: string };

interface SqlThreadData {
  /** better-sqlite3 as this package resolves it (the thread's source has no module of its own). */
  readonly driver: string;
  readonly file: string;
  readonly readonly: boolean;
  readonly patienceMs: number;
}

/** How long a call waits, by the clock, for a lock another connection holds (`patienceMs`). */
const SQL_THREAD_PATIENCE_MS = 60_000;

/**
 * The thread: one connection, the statements it is sent (prepared once, then named by number), run in
 * the order they arrive. A write runs in one IMMEDIATE transaction, a read in one deferred transaction
 * (one snapshot), answering each statement's rows as arrays.
 *
 * Waiting for a lock: SQLite's busy timeout counts its own sleeps rather than reading a clock, and a
 * signal cuts each sleep short (a CPU profiler sends one every millisecond), so under a profiler its
 * 5 s ran out after 60–250 ms and a rebuild failed with SQLITE_BUSY. SQLite waits in place up to a
 * second; past that, a call that failed with SQLITE_BUSY (rolled back whole) runs again until
 * `patienceMs` have passed on the clock.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const pause = new Int32Array(new SharedArrayBuffer(4));
let db;
let unopened;
try {
  db = new Database(workerData.file, workerData.readonly ? { readonly: true, fileMustExist: true } : {});
  db.pragma('busy_timeout = ' + Math.min(workerData.patienceMs, 1000));
} catch (error) {
  unopened = error;
  db = new Database(':memory:');
}
const statements = [];
const write = db.transaction((ops) => {
  for (const [i, params, expected] of ops) {
    const info = statements[i].run(params);
    if (expected !== undefined && info.changes !== expected) {
      const error = new Error('a statement changed ' + info.changes + ' rows where ' + expected + ' was expected');
      error.code = 'EGGMESH_UNEXPECTED_CHANGES';
      throw error;
    }
  }
});
const read = db.transaction((ops) => ops.map(([i, params]) => statements[i].raw(true).all(params)));
const patiently = (run) => {
  const until = Date.now() + workerData.patienceMs;
  for (;;) {
    try {
      return run();
    } catch (error) {
      if (!error || error.code !== 'SQLITE_BUSY' || db.inTransaction || Date.now() >= until) throw error;
      Atomics.wait(pause, 0, 0, 2);
    }
  }
};
parentPort.on('message', (request) => {
  let reply = {};
  try {
    if (unopened) throw unopened;
    for (const sql of request.prepare) statements.push(db.prepare(sql));
    if (request.kind === 'exec') patiently(() => db.exec(request.sql));
    else if (request.kind === 'write') patiently(() => write.immediate(request.ops));
    else if (request.kind === 'read') reply = { rows: patiently(() => read.deferred(request.ops)) };
    else if (request.kind === 'close') db.close();
  } catch (error) {
    reply = { error: String(error && error.message ? error.message : error), code: error && error.code };
  }
  parentPort.postMessage(reply);
  if (request.kind === 'close') parentPort.close();
});
`;

/** better-sqlite3's entry, resolved when the first thread starts. */
let driver: string | undefined;

/** What the thread answered with an error: SQLite's message and code. */
export class SqlThreadError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SqlThreadError';
  }
}

/**
 * A SQLite connection in a worker thread: statements sent to it run there, in order, while this
 * thread goes on. Each call resolves when the thread has run it (a read with its rows); a call after
 * the thread died rejects. Statements are sent as SQL once and by number after that.
 */
export class SqlThread {
  private readonly worker: Worker;
  private readonly numbers = new Map<string, number>();
  private readonly waiting: Array<{
    readonly kind: Request['kind'];
    resolve: (rows: unknown[][][] | undefined) => void;
    reject: (error: Error) => void;
  }> = [];
  private dead: Error | undefined;
  private closing: Promise<void> | undefined;
  private readonly exited: Promise<void>;

  constructor(file: string, options: { readonly readonly?: boolean; readonly patienceMs?: number } = {}) {
    driver ??= createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver,
        file,
        readonly: options.readonly ?? false,
        patienceMs: options.patienceMs ?? SQL_THREAD_PATIENCE_MS,
      } satisfies SqlThreadData,
      stdout: false,
      stderr: false,
    });
    this.worker.on('message', (reply: Reply) => {
      const waiter = this.waiting.shift();
      if (!waiter) return;
      if ('error' in reply)
        waiter.reject(new SqlThreadError(`${waiter.kind} on ${file}: ${reply.error}`, reply.code));
      else waiter.resolve(reply.rows);
    });
    this.worker.on('error', (error) => this.died(error));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        if (!this.closing || this.waiting.length > 0)
          this.died(new Error(`the SQL thread exited (code ${code})`));
        resolve();
      }),
    );
  }

  private died(error: Error): void {
    this.dead ??= error;
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }

  private send(request: Request): Promise<unknown[][][] | undefined> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      this.waiting.push({ kind: request.kind, resolve, reject });
      this.worker.postMessage(request);
    });
  }

  /** The statements' numbers, with the SQL of those the thread has not seen yet added to `prepare`. */
  private numbered(statements: readonly ThreadStatement[], prepare: string[]): unknown[][] {
    return statements.map(([sql, params, expected]) => {
      let n = this.numbers.get(sql);
      if (n === undefined) {
        n = this.numbers.size;
        this.numbers.set(sql, n);
        prepare.push(sql);
      }
      return expected === undefined ? [n, params] : [n, params, expected];
    });
  }

  /** Runs SQL text (pragmas, DDL) as `exec` does. */
  async exec(sql: string): Promise<void> {
    await this.send({ kind: 'exec', prepare: [], sql });
  }

  /** Runs the statements in one IMMEDIATE transaction; rolled back whole if any fails. */
  async write(statements: readonly ThreadStatement[]): Promise<void> {
    const prepare: string[] = [];
    const ops = this.numbered(statements, prepare);
    await this.send({ kind: 'write', prepare, ops });
  }

  /** Runs the queries in one read transaction; each one's rows, as arrays of column values. */
  async read(queries: readonly ThreadStatement[]): Promise<unknown[][][]> {
    const prepare: string[] = [];
    const ops = this.numbered(queries, prepare);
    return (await this.send({ kind: 'read', prepare, ops })) ?? [];
  }

  /** After what was sent before: closes the connection and ends the thread. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.dead) await this.send({ kind: 'close', prepare: [] }).catch(() => undefined);
      else await this.worker.terminate();
      await this.exited;
    })();
    return this.closing;
  }
}
