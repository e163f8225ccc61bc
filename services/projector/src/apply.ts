import {
  effectsOf,
  emptyFarm,
  emptyHen,
  emptyInventory,
  evolveFarm,
  evolveHen,
  evolveInventory,
  type FarmDoc,
  type HenDoc,
  type InventoryDoc,
  withCapacity,
} from '@eggmesh/projections';
import type { LogEntry } from '@eggmesh/store';
import type { Batch } from './batch.js';

/** A coop as the projector tracks it: its farm, whether it is live, and the hens that point at it. */
interface CoopState {
  farm_id: string | null;
  live: boolean;
  hens: number;
  active: number;
}

/** A hen as the projector tracks it. */
interface HenState {
  coop_id: string | null;
  live: boolean;
  active: boolean;
}

const HEN = 'hen';
const COOP = 'coop';

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** How one hen counts towards its coop and farm. */
const contribution = (hen: HenState | null) =>
  hen?.live ? { hens: 1, active: hen.active ? 1 : 0 } : { hens: 0, active: 0 };

/**
 * Applies one log entry to the projections in `batch`. Actors maintain the state the projections
 * need (capacities, which coop a hen is in, which farm a coop belongs to, hen counts); events
 * go through the pure effect functions of @eggmesh/projections.
 */
export function applyEntry(batch: Batch, entry: LogEntry): void {
  const at = entry.createdAt;
  const live = entry.op !== 'delete';
  switch (entry.entity) {
    case 'farm': {
      const doc = farmDoc(batch, entry.id);
      const farm_type = str(entry.payload?.farm_type) ?? doc.payload.farm_type;
      batch.putDocument('farm_output', entry.id, { ...doc.payload, farm_type }, live, at);
      return;
    }
    case 'coop':
      applyCoop(batch, entry, live);
      return;
    case 'hen':
      applyHen(batch, entry, live);
      return;
    case 'container': {
      const doc = inventoryDoc(batch, entry.id);
      const capacity = live ? Number(entry.payload?.capacity ?? doc.payload.capacity) : doc.payload.capacity;
      batch.putDocument('container_inventory', entry.id, withCapacity(doc.payload, capacity), live, at);
      return;
    }
    default:
      break;
  }
  for (const effect of effectsOf(entry)) {
    if (effect.target === 'container_inventory') {
      const doc = inventoryDoc(batch, effect.id);
      batch.putDocument(effect.target, effect.id, evolveInventory(doc.payload, effect), doc.live, at);
    } else if (effect.target === 'hen_productivity') {
      const doc = henDoc(batch, effect.id);
      batch.putDocument(effect.target, effect.id, evolveHen(doc.payload, effect, at), doc.live, at);
    } else {
      const doc = farmDoc(batch, effect.id);
      batch.putDocument(effect.target, effect.id, evolveFarm(doc.payload, effect, at), doc.live, at);
    }
  }
}

function inventoryDoc(batch: Batch, id: string) {
  const doc = batch.document('container_inventory', id);
  return {
    payload: (doc?.payload as unknown as InventoryDoc) ?? emptyInventory(id),
    live: doc?.live ?? false,
  };
}

function henDoc(batch: Batch, id: string) {
  const doc = batch.document('hen_productivity', id);
  return { payload: (doc?.payload as unknown as HenDoc) ?? emptyHen(id), live: doc?.live ?? false };
}

function farmDoc(batch: Batch, id: string) {
  const doc = batch.document('farm_output', id);
  return { payload: (doc?.payload as unknown as FarmDoc) ?? emptyFarm(id), live: doc?.live ?? false };
}

function coopState(batch: Batch, id: string): CoopState {
  const row = batch.stateRow(COOP, id);
  return (row?.value as unknown as CoopState) ?? { farm_id: null, live: false, hens: 0, active: 0 };
}

function henState(batch: Batch, id: string): HenState | null {
  return (batch.stateRow(HEN, id)?.value as unknown as HenState | undefined) ?? null;
}

/** The farm a coop's hens count towards: only a live coop connects its hens to a farm. */
const farmOf = (coop: CoopState) => (coop.live ? coop.farm_id : null);

function addToFarm(batch: Batch, farmId: string | null, delta: { hens: number; active: number }, at: number) {
  if (farmId === null || (delta.hens === 0 && delta.active === 0)) return;
  const doc = farmDoc(batch, farmId);
  const payload: FarmDoc = {
    ...doc.payload,
    total_hens: Math.max(0, doc.payload.total_hens + delta.hens),
    active_hens: Math.max(0, doc.payload.active_hens + delta.active),
  };
  batch.putDocument('farm_output', farmId, payload, doc.live, at);
}

function setHenFarm(batch: Batch, henId: string, farmId: string | null, at: number) {
  const doc = henDoc(batch, henId);
  if (doc.payload.farm_id === farmId) return;
  batch.putDocument('hen_productivity', henId, { ...doc.payload, farm_id: farmId }, doc.live, at);
}

function applyCoop(batch: Batch, entry: LogEntry, live: boolean) {
  const at = entry.createdAt;
  const before = coopState(batch, entry.id);
  const after: CoopState = {
    ...before,
    farm_id: live ? (str(entry.payload?.farm_id) ?? null) : before.farm_id,
    live,
  };
  batch.putState(COOP, entry.id, { ...after }, after.farm_id);
  const oldFarm = farmOf(before);
  const newFarm = farmOf(after);
  if (oldFarm === newFarm) return;
  const counts = { hens: before.hens, active: before.active };
  addToFarm(batch, oldFarm, { hens: -counts.hens, active: -counts.active }, at);
  addToFarm(batch, newFarm, counts, at);
  for (const hen of batch.stateByRef(HEN, entry.id)) setHenFarm(batch, hen.id, newFarm, at);
}

function applyHen(batch: Batch, entry: LogEntry, live: boolean) {
  const at = entry.createdAt;
  const before = henState(batch, entry.id);
  const status = entry.payload?.status;
  const after: HenState = live
    ? {
        coop_id: str(entry.payload?.coop_id),
        live: true,
        active: status === undefined || status === 'active',
      }
    : { coop_id: before?.coop_id ?? null, live: false, active: before?.active ?? false };
  batch.putState(HEN, entry.id, { ...after }, after.coop_id);

  const take = contribution(before);
  const give = contribution(after);
  if (before?.coop_id) {
    const coop = coopState(batch, before.coop_id);
    batch.putState(
      COOP,
      before.coop_id,
      { ...coop, hens: coop.hens - take.hens, active: coop.active - take.active },
      coop.farm_id,
    );
    addToFarm(batch, farmOf(coop), { hens: -take.hens, active: -take.active }, at);
  }
  const coop = after.coop_id ? coopState(batch, after.coop_id) : null;
  if (after.coop_id && coop) {
    batch.putState(
      COOP,
      after.coop_id,
      { ...coop, hens: coop.hens + give.hens, active: coop.active + give.active },
      coop.farm_id,
    );
    addToFarm(batch, farmOf(coop), give, at);
  }
  const doc = henDoc(batch, entry.id);
  const farm_id = coop ? farmOf(coop) : null;
  batch.putDocument('hen_productivity', entry.id, { ...doc.payload, farm_id }, live, at);
}
