import type { ReadStore } from '@eggmesh/store';
import { graphqlError } from './errors.js';

/** The request header carrying the log position a client wants to read at least. */
export const MIN_POSITION_HEADER = 'x-min-position';
/** The response header set when the wait for that position ran out. */
export const STALE_HEADER = 'x-eggmesh-stale';
/**
 * The standard response header that says how long a read with `x-min-position` waited for the read
 * side to reach it: `server-timing: position;dur=<ms>` (the rest of the request's time is the read).
 */
export const SERVER_TIMING_HEADER = 'server-timing';

/** The `server-timing` value of a wait of `ms` milliseconds. */
export const positionTiming = (ms: number): string => `position;dur=${ms.toFixed(1)}`;

/** How far the read side has come (the replica and the projections, as log positions), and when it moves. */
export type Positions = Pick<ReadStore, 'replicaPosition' | 'projectionPosition' | 'changed'>;

/** What a request that asked for a position got; sent back as `extensions.consistency`. */
export interface Consistency {
  readonly requested: number;
  readonly replica: number;
  readonly projections: number;
  readonly stale: boolean;
  /**
   * Who answered: `replica` (the read side the wait ran on) or `primary` (the replica was still
   * behind when the wait ran out, and the primary had the position).
   */
  readonly served: 'replica' | 'primary';
}

/** The header's position, undefined when absent; a malformed value is a GraphQL error. */
export function parseMinPosition(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? undefined : header.trim();
  const position = value !== undefined && /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(position)) {
    throw graphqlError(
      'BAD_MIN_POSITION',
      `${MIN_POSITION_HEADER} must be one non-negative integer (a write's x-log-position), got ${JSON.stringify(header)}`,
    );
  }
  return position;
}

/**
 * The longest a waiter sleeps without looking again: `changed()` may miss a change that lands between
 * another request's look and this one's wait, so the wait is re-checked at this pace (a safety net,
 * not a poll: a change wakes the waiter at once).
 */
const RECHECK_MS = 100;

/**
 * Waits until both the replica and the projections reflect `requested`, or until `boundMs` passed;
 * in the second case the answer says `stale: true` and the caller serves what it has. Sleeps on the
 * store's change signal between looks.
 */
export async function waitForPosition(
  store: Positions,
  requested: number,
  boundMs: number,
): Promise<Consistency> {
  const deadline = performance.now() + boundMs;
  for (;;) {
    const [replica, projections] = await Promise.all([store.replicaPosition(), store.projectionPosition()]);
    if (replica >= requested && projections >= requested)
      return { requested, replica, projections, stale: false, served: 'replica' };
    const left = deadline - performance.now();
    if (left <= 0) return { requested, replica, projections, stale: true, served: 'replica' };
    await store.changed(Math.min(RECHECK_MS, left));
  }
}

/**
 * Chooses what serves a read that asked for `requested`. The wait runs on `replica`, which must be
 * the view the read itself then goes through (`ReadStore.view`: on MongoDB its data reads are
 * causally after its position reads, so the member that serves them has applied what the wait saw).
 * When the wait runs out with the replica behind and a `primary` reader is given (MongoDB, where the
 * replica is a secondary), the primary's positions are read once: when it has the position, it
 * serves the read (`served: 'primary'`, not stale); else the replica serves what it has, `stale`.
 */
export async function chooseReader<S extends Positions>(
  replica: S,
  primary: S | undefined,
  requested: number,
  boundMs: number,
): Promise<{ readonly consistency: Consistency; readonly reader: S }> {
  const waited = await waitForPosition(replica, requested, boundMs);
  if (!waited.stale || primary === undefined) return { consistency: waited, reader: replica };
  const [replicaAt, projections] = await Promise.all([
    primary.replicaPosition(),
    primary.projectionPosition(),
  ]);
  if (replicaAt >= requested && projections >= requested) {
    return {
      consistency: { requested, replica: replicaAt, projections, stale: false, served: 'primary' },
      reader: primary,
    };
  }
  return { consistency: waited, reader: replica };
}
