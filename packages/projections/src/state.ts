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
