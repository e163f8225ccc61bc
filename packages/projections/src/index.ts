export {
  decodeInventoryDoc,
  emptyInventory,
  evolveInventory,
  type InventoryDoc,
  type InventoryEffect,
  materializeInventory,
  utilizationOf,
  withCapacity,
} from './container-inventory/index.js';
export {
  type CoopState,
  decodeCoopState,
  decodeHenState,
  decodeState,
  type HenState,
  isStateKind,
  refOf,
  type StateKind,
  type StateOf,
  stateKinds,
} from './engine/actors.js';
export {
  type Decoded,
  decodeEntry,
  type LoggedEntity,
  type RawLogEntry,
  type RulePayloads,
  type TypedLogEntry,
} from './engine/entries.js';
export {
  applyEntry,
  type CommittedView,
  DocumentVersion,
  directKeys,
  FoldBatch,
  type FoldResult,
  fold,
  type ProjectionView,
  type ProjectionWorkspace,
  type StateWrite,
} from './engine/fold.js';
export { foldKey, KeySet } from './engine/keys.js';
export type { EffectSource, Versioned } from './engine/projection.js';
export { documentJson, storedDocument } from './engine/stored.js';
export {
  addCount,
  addDay,
  DAY_MS,
  type DayCounts,
  dayCountsJson,
  dayCountsOf,
  dayCountsRecord,
  dayOf,
  MAX_COUNT,
  NO_DAYS,
  pruneDays,
  type WindowSums,
  windowSums,
} from './engine/windows.js';
export {
  decodeFarmDoc,
  emptyFarm,
  evolveFarm,
  type FarmDoc,
  type FarmEffect,
  materializeFarm,
} from './farm-output/index.js';
export {
  decodeHenDoc,
  emptyHen,
  evolveHen,
  type HenDoc,
  type HenEffect,
  materializeHen,
} from './hen-productivity/index.js';
export {
  type DocOf,
  decodeDocument,
  type Effect,
  effectsOf,
  emptyDocument,
  materializationKey,
  materialize,
  type ProjectionName,
  projectionNames,
} from './registry.js';
