import type { ValueNode } from 'graphql';
import { graphqlError } from '../errors.js';
import { Kind } from '../graphql/runtime.js';

/** The SDL of the scalar projection counters use. */
export const SAFE_INT_SDL = `"""
An exact integer within ±(2^53 − 1), sent as a JSON number: the projection counters, which outgrow
GraphQL's 32-bit Int. A stored value outside that range answers null with EGGMESH_GRAPHQL_BAD_VALUE.
"""
scalar SafeInt`;

const check = (value: unknown): number => {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw graphqlError(
    'BAD_VALUE',
    `SafeInt cannot represent ${typeof value === 'number' ? value : (JSON.stringify(value) ?? String(value))}: not an integer within ±(2^53 − 1)`,
  );
};

/** Mercurius copies these onto the schema's `SafeInt` type. */
export const safeIntScalar = {
  serialize: check,
  parseValue: check,
  parseLiteral(node: ValueNode): number {
    if (node.kind !== Kind.INT) throw graphqlError('BAD_VALUE', 'SafeInt literals are integers');
    return check(Number(node.value));
  },
};
