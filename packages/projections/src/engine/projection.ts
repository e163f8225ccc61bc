import type { EntityName } from '@eggmesh/schema';
import type { ActorFact } from './actors.js';
import type { TypedLogEntry } from './entries.js';

/** A stored payload or document as it comes from a store: untyped. */
export type Payload = Record<string, unknown>;

/** A projection document with whether its container/hen/farm is live (false: a tombstone). */
export interface Versioned<D> {
  readonly doc: D;
  readonly live: boolean;
}

/** The fields of a store `LogEntry` that determine its effects (structurally a `Pick<LogEntry, ...>`). */
export interface EffectSource {
  readonly entity: EntityName;
  readonly op: 'create' | 'update' | 'delete';
  readonly payload: Payload | null;
  readonly previous: Payload | null;
}

/** A change one event payload makes to one document of the projection `target`. */
export interface ProjectionEffect<N extends string = string> {
  readonly target: N;
  readonly id: string;
}

/** One projection's documents as its rules see them while one log entry is applied. */
export interface Documents<D> {
  /** The log time of the entry being applied (epoch ms). */
  readonly at: number;
  /** A document as the rules start from it: the stored one, or the empty document (not live) when none. */
  get(id: string): Versioned<D>;
  /** A new version of a document, written at `at`; later reads see it. */
  put(id: string, doc: D, live: boolean): void;
}

/**
 * What a projection's rules react to, in log order: an effect of an event on one of its documents,
 * an actor's log entry (every projection sees every actor entry), or a fact the engine derives from
 * the actors' state (a hen's farm, the hens counted towards a farm).
 */
export type Change<E> =
  | { readonly type: 'effect'; readonly effect: E }
  | { readonly type: 'actor'; readonly entry: TypedLogEntry }
  | ActorFact;

/**
 * Everything specific to one projection. The registry (`registry.ts`) lists one of these per
 * projection entity of the catalogue; the fold, the key loading, decoding and materializing are
 * derived from that list.
 *
 * `D` is the document the projector stores (a `days` field holds `DayCounts`, stored as a day map);
 * `E` the effect of one event payload on one document; `P` the public document the read side serves.
 */
export interface ProjectionDefinition<N extends string, D extends object, E extends ProjectionEffect<N>, P> {
  /** The catalogue's projection entity. */
  readonly name: N;
  /** What a document absent from the store starts as. */
  empty(id: string): D;
  /** A stored document; missing or mistyped fields take the empty document's values. */
  decode(id: string, stored: Payload): D;
  /**
   * The ids of this projection's documents that `entry`'s own fields name (its id, the ids in its
   * payloads): loaded before the entry is folded. Documents found through actor state are not listed.
   */
  keysOf(entry: TypedLogEntry): readonly string[];
  /** The effects of one event payload of `entity` on this projection (none for the others). */
  effects(entity: EntityName, payload: Payload): readonly E[];
  /** The effect that exactly undoes `effect`. */
  negate(effect: E): E;
  /** The pure rules: applies one change to the documents, reading and writing only `docs`. */
  apply(docs: Documents<D>, change: Change<E>): void;
  /** The public document as of `ref` (epoch ms). */
  materialize(doc: D, ref: number): P;
}

/** A finite number, or `fallback`. */
export const finiteOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

/** A string, or `fallback`. */
export const textOr = (value: unknown, fallback: string): string =>
  typeof value === 'string' ? value : fallback;

/** A string, or null. */
export const textOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The non-empty string at `key` of an event payload (an id, a timestamp), or null. */
export const idIn = (p: Payload, key: string): string | null => {
  const v = p[key];
  return typeof v === 'string' && v !== '' ? v : null;
};

/** The finite number at `key` of an event payload (an egg count), or null. */
export const countIn = (p: Payload, key: string): number | null => {
  const v = p[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

/** No effects: shared, never written. */
export const NO_EFFECTS: readonly never[] = Object.freeze([]);

/** `-n`, avoiding -0, which deep equality tells apart from 0. */
export const neg = (n: number): number => (n === 0 ? 0 : -n);
