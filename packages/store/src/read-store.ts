import type { EntityReader } from './types.js';

/** What the read-api (and the write-api's REST reads of projections) need. */
export interface ReadStore extends EntityReader {
  /** The log position entity reads reflect (the replica's applied position). */
  replicaPosition(): Promise<number>;
  /** The log position the projections reflect. */
  projectionPosition(): Promise<number>;
  /**
   * Resolves when either position may have moved (or after `timeoutMs`, or on abort). Used by the
   * x-min-position wait instead of polling every few ms.
   */
  changed(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
