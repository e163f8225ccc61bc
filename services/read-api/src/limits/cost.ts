import type {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLObjectType,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
  ValueNode,
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

  /** A connection's `first` (0..maxLimit, default defaultLimit), as `limitOf` reads `limit`. */
  const firstOf = (field: FieldNode): number => {
    const arg = field.arguments?.find((a) => a.name.value === 'first');
    let first: unknown = model.defaultLimit;
    if (arg?.value.kind === Kind.INT) first = Number(arg.value.value);
    else if (arg?.value.kind === Kind.VARIABLE) {
      readsVariables = true;
      first = variables?.[arg.value.name.value] ?? model.defaultLimit;
    }
    if (typeof first !== 'number' || !Number.isInteger(first)) return model.defaultLimit;
    return first >= 0 && first <= model.maxLimit ? first : 0;
  };
  /** The comparisons and sort keys a connection asks for (literals and variables alike), each a unit of work. */
  const termsOf = (field: FieldNode): number => {
    let terms = 0;
    for (const arg of field.arguments ?? []) {
      if (arg.name.value !== 'where' && arg.name.value !== 'orderBy') continue;
      if (arg.value.kind === Kind.VARIABLE) readsVariables = true;
      const value =
        arg.value.kind === Kind.VARIABLE ? variables?.[arg.value.name.value] : valueFromAst(arg.value);
      terms += countTerms(value);
    }
    return terms;
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
        if (isConnectionPart(parent)) {
          // nodes, edges, node and pageInfo of a connection: its rows, counted where it was asked for.
          if (selection.selectionSet) add(walk(selection.selectionSet, named, parentRows, visiting));
          continue;
        }
        if (named.name.endsWith('Aggregate')) {
          // Up to a whole page of the maximum of groups, each a row, and the filter's comparisons;
          // the groups' numbers are parts of them.
          const groups = Math.min(parentRows * model.maxLimit, maxRows);
          rows += groups + parentRows * termsOf(selection);
          if (selection.selectionSet) cells += groups * selection.selectionSet.selections.length;
          continue;
        }
        if (named.name.endsWith('Connection')) {
          // A page of `first` rows, the filter's comparisons and the sort keys, and a total count, which
          // reads up to a whole page of the maximum per parent row (the count is index-served).
          const page = Math.min(parentRows * firstOf(selection), maxRows);
          const counts = selection.selectionSet?.selections.some(
            (s) => s.kind === Kind.FIELD && s.name.value === 'totalCount',
          );
          rows +=
            page +
            parentRows * termsOf(selection) +
            (counts ? Math.min(parentRows * model.maxLimit, maxRows) : 0);
          if (selection.selectionSet) add(walk(selection.selectionSet, named, page, visiting));
          continue;
        }
        const list = isListType(getNullableType(definition.type));
        const fieldRows = Math.min(parentRows * (list ? limitOf(selection) : 1), maxRows);
        rows += fieldRows;
        if (list && parent !== queryType && isFiltered(selection)) {
          // A filtered or sorted relation: per parent its comparisons and sort keys, and as many rows
          // again, the most a parent with more matches than its page makes the batch read past it.
          rows += fieldRows + parentRows * termsOf(selection);
        }
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

/** Whether a field is given `where` or `orderBy` (a relation's filter or order). */
const isFiltered = (field: FieldNode): boolean =>
  field.arguments?.some((a) => a.name.value === 'where' || a.name.value === 'orderBy') ?? false;

/** The types that wrap a connection's rows: reading them reads nothing more. */
const isConnectionPart = (type: GraphQLObjectType): boolean =>
  type.name.endsWith('Connection') || type.name.endsWith('Edge') || type.name === 'PageInfo';

/** A literal argument as a plain value (variables inside it count as one term each). */
function valueFromAst(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, valueFromAst(f.value)]));
    case Kind.LIST:
      return node.values.map(valueFromAst);
    default:
      return 1;
  }
}

/** Comparisons (`{ eq: … }` counts one per operator) and sort keys in a `where` or `orderBy` value. */
function countTerms(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + countTerms(v), 0);
  if (value === null || typeof value !== 'object') return 1;
  return Object.values(value).reduce((sum: number, v) => sum + countTerms(v), 0);
}
