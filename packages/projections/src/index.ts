export {
  type DocOf,
  decodeDocument,
  decodeFarmDoc,
  decodeHenDoc,
  decodeInventoryDoc,
  emptyDocument,
  type Versioned,
} from './documents.js';
export {
  type Effect,
  type EffectSource,
  effectsOf,
  type FarmEffect,
  type HenEffect,
  type InventoryEffect,
  negateEffect,
} from './effects.js';
export {
  type Decoded,
  decodeEntry,
  type LoggedEntity,
  type RawLogEntry,
  type RulePayloads,
  type TypedLogEntry,
} from './entries.js';
export {
  type CommittedView,
  type DocumentVersion,
  directKeys,
  FoldBatch,
  type FoldResult,
  fold,
  foldKey,
  KeySet,
  type StateWrite,
} from './fold.js';
export {
  emptyInventory,
  evolveInventory,
  type InventoryDoc,
  utilizationOf,
  withCapacity,
} from './inventory.js';
export {
  materialize,
  materializeFarm,
  materializeHen,
  materializeInventory,
  type ProjectionName,
  projectionNames,
} from './materialize.js';
export { emptyFarm, emptyHen, evolveFarm, evolveHen, type FarmDoc, type HenDoc } from './productivity.js';
export { applyEntry, type ProjectionView, type ProjectionWorkspace } from './rules.js';
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
} from './state.js';
export { addCount, DAY_MS, dayOf, MAX_COUNT, pruneDays, type WindowSums, windowSums } from './windows.js';
