import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SqliteDatabase, Synchronous } from './database.js';
import { WalIndexHeader } from './wal-index.js';

/** Messages to the checkpoint thread: copy what the WAL holds, or close. */
type CheckpointRequest = 'checkpoint' | 'close';
/**
 * A checkpoint's outcome, SQLite's own figures: whether a lock stopped it (`busy`), frames in the WAL,
 * frames copied to the file (fewer when a reader still uses older ones).
 */
type CheckpointReply = { busy: boolean; log: number; checkpointed: number } | { error: string };
interface CheckpointWorkerData {
  readonly file: string;
  readonly synchronous: Synchronous;
  readonly restMs: number;
  /** better-sqlite3 as this package resolves it (the thread's source has no module of its own). */
  readonly driver: string;
}

/**
 * The thread: its own connection to the WAL database, which copies committed pages from the WAL into
 * the file when asked (`PRAGMA wal_checkpoint(PASSIVE)` never waits for, or blocks, the writer or any
 * reader), so the copy and its fsyncs happen off the writer's event loop. It never commits, so it never
 * checkpoints on its own; its fsyncs follow the writer's `synchronous`. After each checkpoint it rests
 * `restMs` before answering: under steady writes, one copy every `restMs` rather than one per commit.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma(workerData.synchronous === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
parentPort.on('message', (request) => {
  if (request === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  let reply;
  try {
    const row = db.pragma('wal_checkpoint(PASSIVE)')[0] || {};
    reply = { busy: row.busy === 1, log: row.log || 0, checkpointed: row.checkpointed || 0 };
  } catch (error) {
    reply = { error: String(error && error.message ? error.message : error) };
  }
  setTimeout(() => parentPort.postMessage(reply), workerData.restMs);
});
`;

/** better-sqlite3's entry, resolved when the first thread starts (not by every process that imports this). */
let driver: string | undefined;

export interface CheckpointerOptions {
  readonly synchronous?: Synchronous;
  /** Least time between two background checkpoints under steady writes (ms). */
  readonly restMs?: number;
  /**
   * WAL frames (pages) a commit must leave before the thread is asked to copy them: SQLite's own
   * checkpoint threshold. Fewer checkpoints mean fewer WAL restarts, each an fsync inside a commit.
   */
  readonly minFrames?: number;
  /** The thread stops after this long without a checkpoint, and starts again with the next one (ms). */
  readonly idleExitMs?: number;
  /**
   * WAL frames (pages) at which the writer still checkpoints inline, as SQLite does by default at 1000:
   * the net that bounds the WAL when the background copy never catches up with a writer that never pauses.
   */
  readonly inlineLimitPages?: number;
}

const CHECKPOINT_REST_MS = 100;
/**
 * SQLite's default `wal_autocheckpoint`. A checkpoint that copies the whole WAL makes the next commit
 * start the WAL over, and under `synchronous = NORMAL` that commit fsyncs the WAL's new header before it
 * returns: with a checkpoint after every commit, every commit at rest paid for one (farm creates at
 * rest took 2.3–2.7 ms with it, 1.75 ms with this threshold; perf/README.md, round 24).
 */
const CHECKPOINT_MIN_FRAMES = 1000;
const CHECKPOINT_IDLE_EXIT_MS = 30_000;
const CHECKPOINT_INLINE_LIMIT_PAGES = 10_000;
/**
 * A checkpoint that a lock or a reader kept from copying everything is tried again this many times,
 * `restMs` apart, before it waits for the next commit (so an idle process does not keep trying).
 */
const INCOMPLETE_RETRIES = 5;
/** Errors in a row after which the thread is given up and the writer checkpoints inline again. */
const MAX_ERRORS = 5;

export interface CheckpointerStats {
  /** Background checkpoints finished. */
  readonly checkpoints: number;
  /** Whether the thread is up. */
  readonly running: boolean;
  /** The last finished checkpoint's figures (frames in the WAL, frames copied). */
  readonly log: number;
  readonly checkpointed: number;
  /** Set when the thread failed: the writer then checkpoints inline, as SQLite does by default. */
  readonly failed: string | undefined;
}

/**
 * WAL checkpoints off the writer's event loop. SQLite's default checkpoint runs inside the commit
 * that takes the WAL past 1000 pages: that commit copies the pages into the database file and fsyncs
 * it while every request of the process waits (measured on `crud-sequence`: p99 at 10 connections
 * 23–25 ms with it, 6 ms without). Here a worker thread with its own connection runs a passive
 * checkpoint once the WAL holds `minFrames` (at most one at a time, `restMs` apart), so the WAL is
 * copied while the writer goes on. Durability is unchanged: a commit is acknowledged once its WAL
 * frames are written (and synced under `full`), as before; the checkpoint only moves committed pages.
 *
 * The writer keeps an inline checkpoint at `inlineLimitPages`: SQLite restarts the WAL from its start
 * only when a write begins with every frame copied, which a writer that never pauses may never see
 * while the thread copies behind it. The inline one finds nearly everything already copied.
 *
 * Why not after every commit: a checkpoint that copies everything lets the next commit start the WAL
 * over, which writes and fsyncs the WAL's header inside that commit (SQLite does so under `NORMAL`
 * too). Checkpointing at `minFrames` pays that once per `minFrames` frames instead of once per commit.
 *
 * The thread starts with the first checkpoint and stops after `idleExitMs` without one, so an idle
 * process carries no thread.
 */
export class WalCheckpointer {
  private worker: Worker | undefined;
  /** A checkpoint was asked for and its reply has not come. */
  private inFlight = false;
  /** Commits since the last checkpoint was asked for. */
  private dirty = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private retriesLeft = INCOMPLETE_RETRIES;
  private errors = 0;
  private waiters: Array<() => void> = [];
  private readonly restMs: number;
  private readonly minFrames: number;
  private readonly idleExitMs: number;
  /** The WAL's length, from the wal-index header in the `-shm` file. */
  private readonly walIndex: WalIndexHeader;
  private stats_: {
    checkpoints: number;
    log: number;
    checkpointed: number;
    failed: string | undefined;
  } = { checkpoints: 0, log: 0, checkpointed: 0, failed: undefined };

  constructor(
    private readonly db: SqliteDatabase,
    private readonly file: string,
    private readonly options: CheckpointerOptions = {},
  ) {
    this.restMs = options.restMs ?? CHECKPOINT_REST_MS;
    this.minFrames = options.minFrames ?? CHECKPOINT_MIN_FRAMES;
    this.walIndex = new WalIndexHeader(file);
    this.idleExitMs = options.idleExitMs ?? CHECKPOINT_IDLE_EXIT_MS;
    db.pragma(`wal_autocheckpoint = ${options.inlineLimitPages ?? CHECKPOINT_INLINE_LIMIT_PAGES}`);
  }

  /**
   * After each commit of the writer: once the WAL holds `minFrames` (or its length cannot be read),
   * asks the thread for a checkpoint unless one is under way (that one is followed by another).
   */
  committed(): void {
    if (this.closed || this.stats_.failed !== undefined) return;
    if ((this.walIndex.lastFrame() ?? this.minFrames) < this.minFrames) return;
    this.dirty = true;
    this.retriesLeft = INCOMPLETE_RETRIES;
    if (!this.inFlight) this.ask();
  }

  private ask(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.dirty = false;
    this.inFlight = true;
    this.thread().postMessage('checkpoint' satisfies CheckpointRequest);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    driver ??= createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver,
        file: this.file,
        synchronous: this.options.synchronous ?? 'normal',
        restMs: this.restMs,
      } satisfies CheckpointWorkerData,
      // The thread holds one connection and a few objects.
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
      stdout: false,
      stderr: false,
    });
    // Never what keeps a process alive: a checkpoint cut short by exit is redone by the next one.
    worker.unref();
    worker.on('message', (reply: CheckpointReply) => this.replied(reply));
    // Only the current thread's end matters: one stopped on purpose (idle, close) is no longer it, and
    // a new one may already be checkpointing.
    worker.on('error', (error) => {
      if (this.worker === worker) this.fail(error.message);
    });
    worker.on('exit', () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (this.inFlight && !this.closed) this.fail('the checkpoint thread exited during a checkpoint');
      this.inFlight = false;
    });
    this.worker = worker;
    return worker;
  }

  private replied(reply: CheckpointReply): void {
    this.inFlight = false;
    if ('error' in reply) {
      this.errors += 1;
      if (this.errors >= MAX_ERRORS) {
        this.fail(reply.error);
        return;
      }
      this.dirty = true;
    } else {
      this.errors = 0;
      this.stats_.checkpoints += 1;
      this.stats_.log = reply.log;
      this.stats_.checkpointed = reply.checkpointed;
      // Another checkpoint held the lock, or a reader still used older frames: try again shortly.
      if ((reply.busy || reply.checkpointed < reply.log) && this.retriesLeft > 0) {
        this.retriesLeft -= 1;
        this.dirty = true;
      }
    }
    if (this.closed) return;
    if (this.dirty) {
      this.ask();
      return;
    }
    for (const wake of this.waiters.splice(0)) wake();
    this.idleTimer = setTimeout(() => void this.stopThread(), this.idleExitMs);
    this.idleTimer.unref();
  }

  /** The thread is gone for good: the writer checkpoints inline again, as SQLite does by default. */
  private fail(message: string): void {
    this.inFlight = false;
    this.stats_.failed = message;
    if (this.db.open) this.db.pragma('wal_autocheckpoint = 1000');
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Stops the thread: between checkpoints it closes its connection and ends; during one it is ended. */
  private stopThread(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (!worker) return Promise.resolve();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    if (this.inFlight) void worker.terminate();
    else worker.postMessage('close' satisfies CheckpointRequest);
    return exited;
  }

  /** Resolves once no checkpoint is under way or owed (tests, and close). */
  settled(): Promise<void> {
    if (!this.inFlight && !this.dirty) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  stats(): CheckpointerStats {
    return { ...this.stats_, running: this.worker !== undefined };
  }

  /**
   * Stops the thread and waits for it to end, then copies what the WAL holds into the database file on
   * the writer's connection. SQLite does so itself when the last connection closes, but a reader in
   * another process (the edge, the read-api) may close after the writer, and a read-only connection
   * never checkpoints: without this, a stack stopped cleanly could leave up to `minFrames` frames
   * (the latest writes) only in the `-wal` file, and a copy of the database file alone would miss them.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.walIndex.close();
    const stopped = this.stopThread();
    for (const wake of this.waiters.splice(0)) wake();
    await stopped;
    // Passive: never waits for a reader; frames a reader still needs stay for the next open.
    if (this.db.open) this.db.pragma('wal_checkpoint(PASSIVE)');
  }
}

/** A checkpointer for a writable connection in WAL mode (none for other journal modes or `:memory:`). */
export function backgroundCheckpointer(
  db: SqliteDatabase,
  file: string,
  options: CheckpointerOptions = {},
): WalCheckpointer | undefined {
  if (db.memory || db.readonly) return undefined;
  if (db.pragma('journal_mode', { simple: true }) !== 'wal') return undefined;
  return new WalCheckpointer(db, file, options);
}
