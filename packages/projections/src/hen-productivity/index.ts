import type { HenProductivity } from '@eggmesh/schema';
import type { ProjectionDefinition } from '../engine/projection.js';
import { decodeHenDoc, emptyHen, type HenDoc, materializeHen } from './document.js';
import { applyHen, type HenEffect, henEffects, henKeys, negateHenEffect } from './rules.js';

/** Eggs each hen laid (per day, and how many were good), and the farm it counts towards. */
export const henProductivity: ProjectionDefinition<'hen_productivity', HenDoc, HenEffect, HenProductivity> = {
  name: 'hen_productivity',
  empty: emptyHen,
  decode: decodeHenDoc,
  keysOf: henKeys,
  effects: henEffects,
  negate: negateHenEffect,
  apply: applyHen,
  materialize: materializeHen,
};

export { decodeHenDoc, emptyHen, type HenDoc, materializeHen } from './document.js';
export { evolveHen, type HenEffect } from './rules.js';
