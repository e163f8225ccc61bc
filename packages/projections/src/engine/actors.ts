import type { TypedLogEntry } from './entries.js';
import type { KeySet } from './keys.js';

/** A coop as the projector tracks it: its farm, whether it is live, and the hens that point at it. */
export type CoopState = {
  readonly farm_id: string | null;
  readonly live: boolean;
  readonly hens: number;
  readonly active: number;
};

/** A hen as the projector tracks it: its coop, whether it is live and whether it lays (status active). */
export type HenState = {
  readonly coop_id: string | null;
  readonly live: boolean;
  readonly active: boolean;
};

/** The projector's internal state rows by kind (`kind` of a ProjectionStateRow). */
export type StateOf = {
  readonly coop: CoopState;
  readonly hen: HenState;
};

export type StateKind = keyof StateOf;

export const stateKinds: readonly StateKind[] = ['coop', 'hen'];

type Value = Record<string, unknown>;

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const idOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A stored coop state; missing or mistyped fields read as a coop with no farm and no hens. */
export function decodeCoopState(value: Value): CoopState {
  return {
    farm_id: idOrNull(value.farm_id),
    live: value.live === true,
    hens: count(value.hens),
    active: count(value.active),
  };
}

/** A stored hen state; missing or mistyped fields read as a deleted hen in no coop. */
export function decodeHenState(value: Value): HenState {
  return { coop_id: idOrNull(value.coop_id), live: value.live === true, active: value.active === true };
}

const stateDecoders: { readonly [K in StateKind]: (value: Value) => StateOf[K] } = {
  coop: decodeCoopState,
  hen: decodeHenState,
};

/** Decodes a stored state value of `kind`. */
export function decodeState<K extends StateKind>(kind: K, value: Value): StateOf[K] {
  return stateDecoders[kind](value);
}

/** The indexed reference of a state row: a coop's farm, a hen's coop (fan-out looks rows up by it). */
export function refOf<K extends StateKind>(kind: K, value: StateOf[K]): string | null {
  return refs[kind](value);
}

const refs: { readonly [S in StateKind]: (v: StateOf[S]) => string | null } = {
  coop: (v) => v.farm_id,
  hen: (v) => v.coop_id,
};

/** Whether `kind` (a stored row's kind) is one the rules know. */
export const isStateKind = (kind: string): kind is StateKind => kind === 'coop' || kind === 'hen';

/** What the actor rules read and write: the state rows, each write seen by the reads that follow. */
export interface ActorWorkspace {
  /** A state row's value, or null when there is none yet. */
  state<K extends StateKind>(kind: K, id: string): StateOf[K] | null;
  putState<K extends StateKind>(kind: K, id: string, value: StateOf[K]): void;
  /** The hens whose state points at `coopId` (live or not). */
  hensIn(coopId: string): readonly string[];
}

/**
 * What the actor rules tell the projections, in the order they learn it:
 * - `farm_hens`: the hens (and active hens) counted towards a farm moved by these deltas (never both 0);
 * - `hen_farm`: a hen now counts towards `farm_id` because its coop moved to another farm;
 * - `hen_written`: a hen was written (`live`) or deleted; `farm_id` is the farm it counts towards now.
 */
export type ActorFact =
  | { readonly type: 'farm_hens'; readonly farm_id: string; readonly hens: number; readonly active: number }
  | { readonly type: 'hen_farm'; readonly hen_id: string; readonly farm_id: string | null }
  | {
      readonly type: 'hen_written';
      readonly hen_id: string;
      readonly farm_id: string | null;
      readonly live: boolean;
    };

const noCoop: CoopState = { farm_id: null, live: false, hens: 0, active: 0 };

/** How one hen counts towards its coop and farm. */
const contribution = (hen: HenState | null) =>
  hen?.live ? { hens: 1, active: hen.active ? 1 : 0 } : { hens: 0, active: 0 };

/** The farm a coop's hens count towards: only a live coop connects its hens to a farm. */
const farmOf = (coop: CoopState) => (coop.live ? coop.farm_id : null);

type Emit = (fact: ActorFact) => void;

function countHens(emit: Emit, farmId: string | null, delta: { hens: number; active: number }): void {
  if (farmId === null || (delta.hens === 0 && delta.active === 0)) return;
  emit({ type: 'farm_hens', farm_id: farmId, hens: delta.hens, active: delta.active });
}

/**
 * Keeps the state the projections need of coops and hens (which coop a hen is in, which farm a coop
 * belongs to, hen counts through live coops) and tells `emit` what follows for the projections.
 * Other entries change no state.
 */
export function applyActor(w: ActorWorkspace, entry: TypedLogEntry, emit: Emit): void {
  const live = entry.op !== 'delete';
  if (entry.entity === 'coop')
    applyCoop(w, entry.id, live ? (entry.payload?.farm_id ?? null) : undefined, emit);
  else if (entry.entity === 'hen') applyHen(w, entry.id, live ? entry.payload : null, emit);
}

/** A coop written (`farmId`: its farm) or deleted (`farmId` undefined): its hens follow it. */
function applyCoop(w: ActorWorkspace, id: string, farmId: string | null | undefined, emit: Emit): void {
  const before = w.state('coop', id) ?? noCoop;
  const after: CoopState = {
    ...before,
    farm_id: farmId === undefined ? before.farm_id : farmId,
    live: farmId !== undefined,
  };
  w.putState('coop', id, after);
  const oldFarm = farmOf(before);
  const newFarm = farmOf(after);
  if (oldFarm === newFarm) return;
  countHens(emit, oldFarm, { hens: -before.hens, active: -before.active });
  countHens(emit, newFarm, { hens: before.hens, active: before.active });
  for (const hen of w.hensIn(id)) emit({ type: 'hen_farm', hen_id: hen, farm_id: newFarm });
}

/** A hen written (`payload`) or deleted (null): its coop's and farm's counts move with it. */
function applyHen(
  w: ActorWorkspace,
  id: string,
  payload: Extract<TypedLogEntry, { entity: 'hen' }>['payload'],
  emit: Emit,
): void {
  const before = w.state('hen', id);
  const after: HenState = payload
    ? {
        coop_id: payload.coop_id ?? null,
        live: true,
        active: payload.status === undefined || payload.status === 'active',
      }
    : { coop_id: before?.coop_id ?? null, live: false, active: before?.active ?? false };
  w.putState('hen', id, after);

  const take = contribution(before);
  const give = contribution(after);
  if (before?.coop_id) {
    const coop = w.state('coop', before.coop_id) ?? noCoop;
    w.putState('coop', before.coop_id, {
      ...coop,
      hens: coop.hens - take.hens,
      active: coop.active - take.active,
    });
    countHens(emit, farmOf(coop), { hens: -take.hens, active: -take.active });
  }
  const coop = after.coop_id ? (w.state('coop', after.coop_id) ?? noCoop) : null;
  if (after.coop_id && coop) {
    w.putState('coop', after.coop_id, {
      ...coop,
      hens: coop.hens + give.hens,
      active: coop.active + give.active,
    });
    countHens(emit, farmOf(coop), give);
  }
  emit({ type: 'hen_written', hen_id: id, farm_id: coop ? farmOf(coop) : null, live: payload !== null });
}

/** The state rows an actor entry names directly (a coop's hens are found through the ref index). */
export function actorKeys(entry: TypedLogEntry, into: KeySet): void {
  if (entry.entity === 'coop') {
    into.state('coop', entry.id);
    into.byRef('hen', entry.id);
  } else if (entry.entity === 'hen') {
    into.state('hen', entry.id);
    if (entry.payload?.coop_id) into.state('coop', entry.payload.coop_id);
    if (entry.previous?.coop_id) into.state('coop', entry.previous.coop_id);
  }
}
