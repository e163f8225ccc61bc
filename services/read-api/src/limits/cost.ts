import type {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLObjectType,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { getNamedType, getNullableType, isListType, isObjectType, Kind } from '../graphql/runtime.js';

export interface CostModel {
  /** Rows a root list returns without `limit`. */
  readonly defaultLimit: number;
  /** The most rows a root list returns. */
  readonly maxLimit: number;
  /** Rows assumed per parent for a list relation (its real size is unknown before running). */
  readonly listFanOut: number;
}

/** Rows assumed per parent for a list relation: the default of `CostModel.listFanOut`. */
export const DEFAULT_LIST_FAN_OUT = 10;

function operationOf(document: DocumentNode, operationName: string | null | undefined) {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  if (operationName) return operations.find((o) => o.name?.value === operationName);
  return operations.length === 1 ? operations[0] : undefined;
}

/**
 * Estimates how many rows an operation reads: a root list counts its `limit` (literal or variable,
 * default and cap from the model), a root single 1, and below that every single relation counts one
 * row per parent row and every list relation `listFanOut` rows per parent row. Scalar fields are free.
 * Aliases count once each, so repeating a field does not hide its cost.
 */
export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  model: CostModel,
): number {
  const cached = fixedCosts.get(document)?.get(operationName ?? '');
  if (cached !== undefined) return cached;
  const operation = operationOf(document, operationName);
  const queryType = schema.getQueryType();
  if (operation?.operation !== 'query' || !queryType) return 0;
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
    if (typeof limit !== 'number' || !Number.isFinite(limit)) return model.defaultLimit;
    return Math.min(Math.max(1, Math.trunc(limit)), model.maxLimit);
  };

  // Costs per parent row, memoised per fragment: a fragment spread many times is walked once.
  const unitMemo = new Map<string, number>();
  const rootMemo = new Map<string, number>();

  const walk = (
    selectionSet: SelectionSetNode,
    parent: GraphQLObjectType,
    root: boolean,
    visiting: Set<string>,
  ): number => {
    let cost = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('__')) continue;
        const definition = parent.getFields()[selection.name.value];
        if (!definition) continue;
        const named = getNamedType(definition.type);
        if (!isObjectType(named)) continue;
        const list = isListType(getNullableType(definition.type));
        const rows = root ? (list ? limitOf(selection) : 1) : list ? model.listFanOut : 1;
        const below = selection.selectionSet ? walk(selection.selectionSet, named, false, visiting) : 0;
        cost += rows * (1 + below);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        cost += walk(selection.selectionSet, parent, root, visiting);
      } else {
        const name = selection.name.value;
        const memo = root ? rootMemo : unitMemo;
        const known = memo.get(name);
        const fragment = fragments.get(name);
        if (known !== undefined) cost += known;
        else if (fragment && !visiting.has(name)) {
          visiting.add(name);
          const value = walk(fragment.selectionSet, parent, root, visiting);
          visiting.delete(name);
          memo.set(name, value);
          cost += value;
        }
      }
    }
    return cost;
  };

  const cost = walk(operation.selectionSet, queryType, true, new Set());
  // Parsed documents are reused for the same query text; a cost no variable changes is computed once.
  if (!readsVariables) {
    const byOperation = fixedCosts.get(document) ?? new Map<string, number>();
    byOperation.set(operationName ?? '', cost);
    fixedCosts.set(document, byOperation);
  }
  return cost;
}

const fixedCosts = new WeakMap<DocumentNode, Map<string, number>>();
