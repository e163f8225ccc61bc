import { type DocOf, emptyDocument, type Versioned } from './documents.js';
import { effectsOf } from './effects.js';
import type { TypedLogEntry } from './entries.js';
import { evolveInventory, withCapacity } from './inventory.js';
import type { ProjectionName } from './materialize.js';
import { evolveFarm, evolveHen } from './productivity.js';
import type { CoopState, HenState, StateKind, StateOf } from './state.js';

/** What the rules read: the projections and the projector's state as they stand before an entry. */
export interface ProjectionView {
  /** A document, or null when there is none yet. */
  document<N extends ProjectionName>(entity: N, id: string): Versioned<DocOf[N]> | null;
  /** A state row's value, or null when there is none yet. */
  state<K extends StateKind>(kind: K, id: string): StateOf[K] | null;
  /** The hens whose state points at `coopId` (live or not). */
  hensIn(coopId: string): readonly string[];
}

/** A view the rules also write to; each write is seen by the reads that follow. */
export interface ProjectionWorkspace extends ProjectionView {
  /** A new version of a document at log time `createdAt`. */
  putDocument<N extends ProjectionName>(
    entity: N,
    id: string,
    doc: DocOf[N],
    live: boolean,
    createdAt: number,
  ): void;
  putState<K extends StateKind>(kind: K, id: string, value: StateOf[K]): void;
}

/** A document as the rules start from it: the stored one, or the empty document (not live) when none. */
function current<N extends ProjectionName>(w: ProjectionView, entity: N, id: string): Versioned<DocOf[N]> {
  return w.document(entity, id) ?? { doc: emptyDocument(entity, id), live: false };
}

const noCoop: CoopState = { farm_id: null, live: false, hens: 0, active: 0 };

/** How one hen counts towards its coop and farm. */
const contribution = (hen: HenState | null) =>
  hen?.live ? { hens: 1, active: hen.active ? 1 : 0 } : { hens: 0, active: 0 };

/** The farm a coop's hens count towards: only a live coop connects its hens to a farm. */
const farmOf = (coop: CoopState) => (coop.live ? coop.farm_id : null);

/**
 * Applies one log entry to the projections in `w`. Actors maintain the state the projections need
 * (capacities, which coop a hen is in, which farm a coop belongs to, hen counts through live coops,
 * farm types); events go through the pure effect functions. Reads and writes only `w`.
 */
export function applyEntry(w: ProjectionWorkspace, entry: TypedLogEntry): void {
  const at = entry.createdAt;
  const live = entry.op !== 'delete';
  switch (entry.entity) {
    case 'farm': {
      const { doc } = current(w, 'farm_output', entry.id);
      const farm_type = entry.payload?.farm_type ?? doc.farm_type;
      w.putDocument('farm_output', entry.id, { ...doc, farm_type }, live, at);
      return;
    }
    case 'coop':
      applyCoop(w, entry.id, live ? (entry.payload?.farm_id ?? null) : undefined, at);
      return;
    case 'hen':
      applyHen(w, entry.id, live ? entry.payload : null, at);
      return;
    case 'container': {
      const { doc } = current(w, 'container_inventory', entry.id);
      const capacity = live ? (entry.payload?.capacity ?? doc.capacity) : doc.capacity;
      w.putDocument('container_inventory', entry.id, withCapacity(doc, capacity), live, at);
      return;
    }
    case 'consumer':
      return;
    default:
      break;
  }
  for (const effect of effectsOf(entry)) {
    if (effect.target === 'container_inventory') {
      const { doc, live: docLive } = current(w, effect.target, effect.id);
      w.putDocument(effect.target, effect.id, evolveInventory(doc, effect), docLive, at);
    } else if (effect.target === 'hen_productivity') {
      const { doc, live: docLive } = current(w, effect.target, effect.id);
      w.putDocument(effect.target, effect.id, evolveHen(doc, effect, at), docLive, at);
    } else {
      const { doc, live: docLive } = current(w, effect.target, effect.id);
      w.putDocument(effect.target, effect.id, evolveFarm(doc, effect, at), docLive, at);
    }
  }
}

function addToFarm(
  w: ProjectionWorkspace,
  farmId: string | null,
  delta: { hens: number; active: number },
  at: number,
): void {
  if (farmId === null || (delta.hens === 0 && delta.active === 0)) return;
  const { doc, live } = current(w, 'farm_output', farmId);
  const next = {
    ...doc,
    total_hens: Math.max(0, doc.total_hens + delta.hens),
    active_hens: Math.max(0, doc.active_hens + delta.active),
  };
  w.putDocument('farm_output', farmId, next, live, at);
}

function setHenFarm(w: ProjectionWorkspace, henId: string, farmId: string | null, at: number): void {
  const { doc, live } = current(w, 'hen_productivity', henId);
  if (doc.farm_id === farmId) return;
  w.putDocument('hen_productivity', henId, { ...doc, farm_id: farmId }, live, at);
}

/** A coop written (`farmId`: its farm) or deleted (`farmId` undefined): its hens follow it. */
function applyCoop(w: ProjectionWorkspace, id: string, farmId: string | null | undefined, at: number): void {
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
  addToFarm(w, oldFarm, { hens: -before.hens, active: -before.active }, at);
  addToFarm(w, newFarm, { hens: before.hens, active: before.active }, at);
  for (const hen of w.hensIn(id)) setHenFarm(w, hen, newFarm, at);
}

/** A hen written (`payload`) or deleted (null): its coop's and farm's counts move with it. */
function applyHen(
  w: ProjectionWorkspace,
  id: string,
  payload: Extract<TypedLogEntry, { entity: 'hen' }>['payload'],
  at: number,
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
    addToFarm(w, farmOf(coop), { hens: -take.hens, active: -take.active }, at);
  }
  const coop = after.coop_id ? (w.state('coop', after.coop_id) ?? noCoop) : null;
  if (after.coop_id && coop) {
    w.putState('coop', after.coop_id, {
      ...coop,
      hens: coop.hens + give.hens,
      active: coop.active + give.active,
    });
    addToFarm(w, farmOf(coop), give, at);
  }
  const { doc } = current(w, 'hen_productivity', id);
  const farm_id = coop ? farmOf(coop) : null;
  w.putDocument('hen_productivity', id, { ...doc, farm_id }, payload !== null, at);
}
