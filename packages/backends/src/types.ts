import type { Config } from '@eggmesh/service-kit/config';
import type { EventLog, PrimaryStore, ProjectionStore, QueryReader, ReadStore } from '@eggmesh/store';

/** The settings that choose and locate the adapters. */
export type BackendConfig = Pick<Config, 'store' | 'dataDir' | 'sqliteSync' | 'mongodb'>;
export type LogConfig = Pick<Config, 'log' | 'kafka'>;

/** What the write-api writes to, and reads its own writes from. */
export interface WriteSide {
  readonly primary: PrimaryStore;
  /** Reads every entity from the primary (actors, events) and the projection store (projections). */
  readonly reader: QueryReader;
  close(): Promise<void>;
}

/** What the read-api reads. */
export interface ReadSide {
  /** Entities from the replica, and the projections: what GraphQL reads. */
  readonly store: ReadStore;
  /**
   * What the REST reads read: a reader of the primary where the replica may lag it (MongoDB
   * secondaries), so that a client reads its own REST writes at once; else the store itself.
   */
  readonly restReader: QueryReader;
  /**
   * The primary's reads and positions where `store` reads copies that may lag it (MongoDB
   * secondaries); absent where the store is the only copy (SQLite).
   */
  readonly primary?: ReadStore;
  close(): Promise<void>;
}

/** An event log to consume, and why it is not usable right now (for `/ready`), or null. */
export interface LogSource {
  readonly log: EventLog;
  problem(): string | null;
  close(): Promise<void>;
}

/** The projections a projector applies the log to. */
export interface ProjectionSide {
  /** The store to apply to now. */
  current(): ProjectionStore;
  /** A store to switch to when a rebuild made another one live since the last call (SQLite), else undefined. */
  follow(): ProjectionStore | undefined;
  /** Counts the promotions seen so far; `promoted` resolves once it passes `seen` (or after `timeoutMs`). */
  promotions(): number;
  promoted(seen: number, timeoutMs: number, signal: AbortSignal): Promise<void>;
  /** For the start-up log line. */
  describe(): Record<string, unknown>;
  close(): Promise<void>;
}

/** Where `pnpm rebuild-projections` replays the log into, and how the result goes live. */
export interface RebuildTarget {
  readonly log: EventLog;
  /** The store of the first pass; later passes use what `afterFirstPass` returns, if given. */
  readonly store: ProjectionStore;
  /** Caches may hold everything while folding (the store of the first pass holds it in memory). */
  readonly unboundedCache: boolean;
  /** After the first pass over the whole log: makes the store durable and indexed; the store for later passes. */
  afterFirstPass?(): Promise<ProjectionStore>;
  /** Makes the rebuilt projections the live ones. */
  promote(): Promise<{ generation: string | null; previous: string | null; removed: readonly string[] }>;
  close(): Promise<void>;
}

/** One storage backend: every side of eggmesh opens its adapters through it. */
export interface Backend {
  readonly name: Config['store'];
  /** For the start-up log line (never credentials). */
  describe(): Record<string, unknown>;
  openWriteSide(): Promise<WriteSide>;
  /** The replica the read side reads (read-only), waiting until the write side created it. */
  openReadSide(): Promise<ReadSide>;
  /** The primary's own event log, read-only. */
  openPrimaryLog(signal?: AbortSignal): Promise<LogSource>;
  openProjections(): Promise<ProjectionSide>;
  /** Exits the process with code 3 when another rebuild is running on the same data. */
  openRebuild(note: (line: string) => void): Promise<RebuildTarget>;
}
