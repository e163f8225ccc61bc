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
export { addCount, DAY_MS, dayOf, MAX_COUNT, pruneDays, type WindowSums, windowSums } from './windows.js';
