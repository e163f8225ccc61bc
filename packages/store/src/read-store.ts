import type { EntityName } from '@eggmesh/schema';
import type { AggregateGroup, AggregateOptions, QueryOptions, QueryPage } from './query.js';
import type { EntityReader } from './types.js';

/** A projection document one projector commit wrote: its newest version in that commit. */
export interface ProjectionChange {
  /** The checkpoint of the commit that wrote it (the log position the document reflects). */
  readonly position: number;
  readonly entity: EntityName;
  readonly id: string;
  /** False for a tombstone (its container/hen/farm was deleted). */
  readonly live: boolean;
  /** The internal document, as the projector keeps it. */
  readonly payload: Record<string, unknown>;
}

/** Reads entities and answers filtered, sorted pages: what the REST reads need. */
export interface QueryReader extends EntityReader {
  /**
   * A page of the rows matching a filter, in a sort order (tie-broken by id), after a cursor, with
   * the total count; as of `at` when given. The adapter compiles filter, order and cursor for its
   * storage (SQL, a MongoDB filter) and reads only the page and the count.
   */
  query(entity: EntityName, options: QueryOptions): Promise<QueryPage>;
}

/** What the read-api (and the write-api's REST reads of projections) need. */
export interface ReadStore extends QueryReader {
  /** The log position entity reads reflect (the replica's applied position). */
  replicaPosition(): Promise<number>;
  /** The log position the projections reflect. */
  projectionPosition(): Promise<number>;
  /**
   * Resolves when either position may have moved (or after `timeoutMs`, or on abort). Used by the
   * x-min-position wait instead of polling every few ms.
   */
  changed(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /**
   * The projection documents written by the commits whose checkpoint is above `after` and at most
   * `through` (call with `through` at most `projectionPosition()`), in commit order, each document
   * once per commit. The feed of the live subscriptions: each read-api process polls it.
   */
  projectionChanges(after: number, through: number): Promise<ProjectionChange[]>;
  /**
   * Groups of the event rows matching a filter (by text fields and/or a time bucket), each with its
   * count and the sum, min, max and avg of numeric fields, in group order; computed by the storage
   * (SQL GROUP BY, a MongoDB $group), never by loading the rows.
   */
  aggregate(entity: EntityName, options: AggregateOptions): Promise<AggregateGroup[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * A view for one request in which every read reflects at least what the view's own position reads
   * answered, however the store spreads reads over copies of the data (MongoDB secondaries: one
   * causally consistent session, so the member that serves a read has applied what the member that
   * answered the position had). A store with one copy of the data has no `view`: it is its own.
   * `end()` releases the view.
   */
  view?(): ReadView;
}

/** What `ReadStore.view` answers: the store's reads and positions, bound to one view. */
export type ReadView = Omit<ReadStore, 'close' | 'ping' | 'view'> & { end(): Promise<void> };
