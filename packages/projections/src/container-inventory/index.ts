import type { ContainerInventory } from '@eggmesh/schema';
import type { ProjectionDefinition } from '../engine/projection.js';
import { decodeInventoryDoc, emptyInventory, type InventoryDoc, materializeInventory } from './document.js';
import {
  applyInventory,
  type InventoryEffect,
  inventoryEffects,
  inventoryKeys,
  negateInventoryEffect,
} from './rules.js';

/** Eggs held in each container: storage events move them, the container sets the capacity. */
export const containerInventory: ProjectionDefinition<
  'container_inventory',
  InventoryDoc,
  InventoryEffect,
  ContainerInventory
> = {
  name: 'container_inventory',
  empty: emptyInventory,
  decode: decodeInventoryDoc,
  keysOf: inventoryKeys,
  effects: inventoryEffects,
  negate: negateInventoryEffect,
  apply: applyInventory,
  materialize: materializeInventory,
};

export { decodeInventoryDoc, emptyInventory, type InventoryDoc, materializeInventory } from './document.js';
export { evolveInventory, type InventoryEffect, utilizationOf, withCapacity } from './rules.js';
