import type { EntityName } from '@eggmesh/schema';

/** A projection document as the projector keeps it: the internal document, live or tombstoned. */
export interface ProjectionDocument {
  readonly id: string;
  readonly payload: Record<string, unknown>;
  /** False once its container/hen/farm is deleted; the counters survive in the tombstone. */
  readonly live: boolean;
}

/** A version to append: `createdAt` is the log entry's time; a second write at the same time replaces the first. */
export interface ProjectionWrite extends ProjectionDocument {
  readonly entity: EntityName;
  readonly createdAt: number;
  /**
   * `payload` as JSON text, when the writer has it at hand (the same JSON value as
   * `JSON.stringify(payload)`); a store that keeps JSON text uses it instead of serializing `payload`.
   */
  readonly json?: string;
}

/** Internal state the projector keeps beside the documents (e.g. which coop a hen is in). */
export interface ProjectionStateRow {
  readonly kind: string;
  readonly id: string;
  readonly value: Record<string, unknown>;
  /** An indexed reference used for fan-out (e.g. a hen's coop id). */
  readonly ref: string | null;
}

/** What a batch needs loaded before it folds. */
export interface ProjectionKeys {
  readonly documents: ReadonlyArray<{ readonly entity: EntityName; readonly id: string }>;
  readonly state: ReadonlyArray<{ readonly kind: string; readonly id: string }>;
  /** State rows of `kind` whose `ref` equals one of these (fan-out, e.g. the hens of a coop). */
  readonly stateByRef: ReadonlyArray<{ readonly kind: string; readonly ref: string }>;
}

/** The key of a document (`entity`, `id`), a state row (`kind`, `id`) or a ref list (`kind`, `ref`) in {@link LoadedProjections}. */
export const projectionKey = (a: string, b: string): string => `${a}\u0000${b}`;

/** The answer to one `load`: absent keys are simply missing from the maps. */
export interface LoadedProjections {
  /** The checkpoint the loaded data reflects. */
  readonly checkpoint: number;
  /** Keyed by `${entity}\u0000${id}`. */
  readonly documents: ReadonlyMap<string, ProjectionDocument>;
  /** Keyed by `${kind}\u0000${id}`. */
  readonly state: ReadonlyMap<string, ProjectionStateRow>;
  /** Keyed by `${kind}\u0000${ref}`; every asked ref is present (possibly with an empty list). */
  readonly stateByRef: ReadonlyMap<string, readonly ProjectionStateRow[]>;
}

export interface ProjectionCommit {
  readonly expectedCheckpoint: number;
  readonly checkpoint: number;
  readonly documents: readonly ProjectionWrite[];
  readonly state: readonly ProjectionStateRow[];
}

/**
 * The projector's store. `load` reads everything a batch needs in one call; `commit` writes
 * documents + state + checkpoint in one atomic step, only if the checkpoint is still
 * `expectedCheckpoint` (else it throws StoreError CONFLICT and writes nothing).
 */
export interface ProjectionStore {
  checkpoint(): Promise<number>;
  load(keys: ProjectionKeys): Promise<LoadedProjections>;
  commit(batch: ProjectionCommit): Promise<void>;
  close(): Promise<void>;
}
