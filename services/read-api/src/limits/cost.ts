import type {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLObjectType,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { graphqlError } from '../errors.js';
import { getNamedType, getNullableType, isListType, isObjectType, Kind } from '../graphql/runtime.js';

export interface CostModel {
  /** Rows a list (root or relation, per parent) returns without `limit`. */
  readonly defaultLimit: number;
  /** The most rows a list returns (per parent for a relation). */
  readonly maxLimit: number;
  /**
   * The most rows one response carries (`config.graphql.maxRows`, 100,000): no field can produce more,
   * since the response is refused there while running. Unbounded when absent.
   */
  readonly maxRows?: number;
}

/** A `limit` outside 1..max is the client's error (the same rule and code as REST's `?limit=`). */
export function checkLimit(limit: number, maxLimit: number): void {
  if (!validLimit(limit, maxLimit)) {
    throw graphqlError('BAD_QUERY', `limit must be between 1 and ${maxLimit} (got ${limit})`);
  }
}

const validLimit = (limit: number, maxLimit: number): boolean => limit >= 1 && limit <= maxLimit;

function operationOf(document: DocumentNode, operationName: string | null | undefined) {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  if (operationName) return operations.find((o) => o.name?.value === operationName);
  return operations.length === 1 ? operations[0] : undefined;
}

/**
 * Bounds how many rows an operation reads, from what the store is asked for: a list counts its
 * `limit` (literal or variable, default and cap from the model), per parent row below the root; a
 * single (by id, or a single relation) counts 1 per parent row. Each field's rows are at most
 * `maxRows`, where a running response is cut off. Scalar fields are free. Every root field, alias and
 * fragment spread counts, so repeating a field does not hide its cost.
 */
export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  model: CostModel,
): number {
  return estimate(schema, document, operationName, variables, model).rows;
}

/**
 * The least JSON one selected scalar field of one row adds to a response: its quoted key, a short
 * value and the punctuation (an id alone is 40 bytes and more). A floor, so that the estimate below
 * never refuses a response that would fit.
 */
export const FIELD_BYTES = 24;

/**
 * The least size, in bytes, of the response of an operation whose lists are all full: every scalar
 * field selected under a list counts FIELD_BYTES once per row the estimate gives its parent (rows ×
 * fields). Compared, before running, with the response byte cap that would otherwise refuse the
 * response after it was read.
 */
export function estimateResponseBytes(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  model: CostModel,
): number {
  return estimate(schema, document, operationName, variables, model).cells * FIELD_BYTES;
}

interface Estimate {
  /** Rows read (each list its limit per parent row, each single 1 per parent row). */
  readonly rows: number;
  /** Scalar values in the response: each selected scalar field once per row of its parent. */
  readonly cells: number;
}

function estimate(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  model: CostModel,
): Estimate {
  const cached = fixedCosts.get(document)?.get(operationName ?? '');
  if (cached !== undefined) return cached;
  const operation = operationOf(document, operationName);
  const queryType = schema.getQueryType();
  if (operation?.operation !== 'query' || !queryType) return { rows: 0, cells: 0 };
  let readsVariables = false;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions)
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  const limitOf = (field: FieldNode): number => {
    const arg = field.arguments?.find((a) => a.name.value === 'limit');
    let limit: unknown = model.defaultLimit;
    if (arg?.value.kind === Kind.INT) limit = Number(arg.value.value);
    else if (arg?.value.kind === Kind.VARIABLE) {
      readsVariables = true;
      limit = variables?.[arg.value.name.value] ?? model.defaultLimit;
    }
    // Not an Int (a variable of the wrong type or beyond 32 bits): graphql's variable coercion refuses it.
    if (typeof limit !== 'number' || !Number.isInteger(limit) || Math.abs(limit) > 2 ** 31 - 1) {
      return model.defaultLimit;
    }
    // Out of range: the field fails when it runs (its resolver refuses the limit) and reads nothing.
    return validLimit(limit, model.maxLimit) ? limit : 0;
  };

  const maxRows = model.maxRows ?? Number.POSITIVE_INFINITY;
  // The cost of a fragment under a given number of parent rows, memoised: a fragment spread many
  // times is walked once per distinct parent row count.
  const memo = new Map<string, Estimate>();

  /** The rows read and the values answered by `selectionSet` and below, under `parentRows` rows of `parent`. */
  const walk = (
    selectionSet: SelectionSetNode,
    parent: GraphQLObjectType,
    parentRows: number,
    visiting: Set<string>,
  ): Estimate => {
    let rows = 0;
    let cells = 0;
    const add = (part: Estimate) => {
      rows += part.rows;
      cells += part.cells;
    };
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('__')) {
          cells += parentRows;
          continue;
        }
        const definition = parent.getFields()[selection.name.value];
        if (!definition) continue;
        const named = getNamedType(definition.type);
        if (!isObjectType(named)) {
          cells += parentRows;
          continue;
        }
        const list = isListType(getNullableType(definition.type));
        const fieldRows = Math.min(parentRows * (list ? limitOf(selection) : 1), maxRows);
        rows += fieldRows;
        if (selection.selectionSet) add(walk(selection.selectionSet, named, fieldRows, visiting));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        add(walk(selection.selectionSet, parent, parentRows, visiting));
      } else {
        const name = selection.name.value;
        const key = `${name}\u0000${parentRows}`;
        const known = memo.get(key);
        const fragment = fragments.get(name);
        if (known !== undefined) add(known);
        else if (fragment && !visiting.has(name)) {
          visiting.add(name);
          const value = walk(fragment.selectionSet, parent, parentRows, visiting);
          visiting.delete(name);
          memo.set(key, value);
          add(value);
        }
      }
    }
    return { rows, cells };
  };

  const result = walk(operation.selectionSet, queryType, 1, new Set());
  // Parsed documents are reused for the same query text; a cost no variable changes is computed once.
  if (!readsVariables) {
    const byOperation = fixedCosts.get(document) ?? new Map<string, Estimate>();
    byOperation.set(operationName ?? '', result);
    fixedCosts.set(document, byOperation);
  }
  return result;
}

const fixedCosts = new WeakMap<DocumentNode, Map<string, Estimate>>();
