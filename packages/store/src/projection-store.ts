import type { EntityName } from '@eggmesh/schema';
import type { EntityReader } from './types.js';

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
}

/** Internal state the projector keeps beside the documents (e.g. which coop a hen is in). */
export interface ProjectionStateRow {
  readonly kind: string;
  readonly id: string;
  readonly value: Record<string, unknown>;
  /** An indexed reference used for fan-out (e.g. a hen's coop id). */
  readonly ref: string | null;
}

/**
 * The projector's store: documents, internal state and the checkpoint.
 * `commit` writes a batch and moves the checkpoint in one atomic step, and only if
 * the checkpoint is still `expectedCheckpoint` (so two projectors never both apply a batch).
 */
export interface ProjectionStore extends EntityReader {
  checkpoint(): Promise<number>;
  loadDocuments(entity: EntityName, ids: readonly string[]): Promise<Map<string, ProjectionDocument>>;
  loadState(kind: string, ids: readonly string[]): Promise<Map<string, ProjectionStateRow>>;
  stateByRef(kind: string, ref: string): Promise<ProjectionStateRow[]>;
  commit(batch: {
    readonly expectedCheckpoint: number;
    readonly checkpoint: number;
    readonly documents: readonly ProjectionWrite[];
    readonly state: readonly ProjectionStateRow[];
  }): Promise<void>;
  close(): Promise<void>;
}
