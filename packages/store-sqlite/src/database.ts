import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

/** `normal` survives a crash of any process (WAL); `full` also survives power loss, at an fsync per commit. */
export type Synchronous = 'normal' | 'full';

export interface OpenOptions {
  readonly readonly?: boolean;
  readonly synchronous?: Synchronous;
  /** How long a writer waits for another process's write lock before failing (ms). */
  readonly busyTimeoutMs?: number;
  /** SQLite's page cache of a writable connection, KiB (64 MiB unless given). */
  readonly cacheKib?: number;
}

export function openDatabase(file: string, options: OpenOptions = {}): SqliteDatabase {
  if (options.readonly) {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    db.pragma('query_only = ON');
    return db;
  }
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  db.pragma('foreign_keys = OFF');
  // 64 MiB of page cache by default: random-key index inserts touch many pages per transaction.
  db.pragma(`cache_size = -${options.cacheKib ?? 65536}`);
  return db;
}

/** Double-quotes an SQL identifier built from catalogue names. */
export function quote(identifier: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(identifier)) throw new Error(`unsafe SQL identifier: ${identifier}`);
  return `"${identifier}"`;
}
