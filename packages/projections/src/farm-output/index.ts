import type { FarmOutput } from '@eggmesh/schema';
import type { ProjectionDefinition } from '../engine/projection.js';
import { decodeFarmDoc, emptyFarm, type FarmDoc, materializeFarm } from './document.js';
import { applyFarm, type FarmEffect, farmEffects, farmKeys, negateFarmEffect } from './rules.js';

/** Eggs each farm reported (per day), its type, and the hens counted through its live coops. */
export const farmOutput: ProjectionDefinition<'farm_output', FarmDoc, FarmEffect, FarmOutput> = {
  name: 'farm_output',
  empty: emptyFarm,
  decode: decodeFarmDoc,
  keysOf: farmKeys,
  effects: farmEffects,
  negate: negateFarmEffect,
  apply: applyFarm,
  materialize: materializeFarm,
};

export { decodeFarmDoc, emptyFarm, type FarmDoc, materializeFarm } from './document.js';
export { evolveFarm, type FarmEffect } from './rules.js';
