export {
  type DocOf,
  decodeDocument,
  decodeFarmDoc,
  decodeHenDoc,
  decodeInventoryDoc,
  documentJson,
  emptyDocument,
  storedDocument,
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
  DocumentVersion,
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
  materializationKey,
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
} from './windows.js';
