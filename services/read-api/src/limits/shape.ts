import type { DocumentNode, FragmentDefinitionNode, SelectionSetNode } from 'graphql';
import { graphqlError } from '../errors.js';
import { Kind } from '../graphql/runtime.js';

/** What a selection set expands to once every fragment spread is replaced by its fragment. */
export interface Shape {
  /** Fields selected, counting every alias and every spread again (introspection included). */
  readonly fields: number;
  /** Levels of nested fields (a root field is 1; fragments add none; introspection fields add none). */
  readonly depth: number;
}

const EMPTY: Shape = { fields: 0, depth: 0 };

/**
 * The expanded shape of every operation and fragment of a document, computed in one pass that
 * memoises each fragment: linear in the document's size however often fragments spread each other.
 * A fragment cycle counts as empty here (validation reports it).
 */
export function documentShapes(document: DocumentNode): {
  operations: Array<{ name: string | undefined; shape: Shape }>;
  fragments: Array<{ name: string; shape: Shape }>;
} {
  const definitions = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions)
    if (d.kind === Kind.FRAGMENT_DEFINITION) definitions.set(d.name.value, d);
  const memo = new Map<string, Shape>();
  const visiting = new Set<string>();

  const fragmentShape = (name: string): Shape => {
    const known = memo.get(name);
    if (known) return known;
    const fragment = definitions.get(name);
    if (!fragment || visiting.has(name)) return EMPTY;
    visiting.add(name);
    const shape = shapeOf(fragment.selectionSet);
    visiting.delete(name);
    memo.set(name, shape);
    return shape;
  };

  const shapeOf = (selectionSet: SelectionSetNode): Shape => {
    let fields = 0;
    let depth = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const below = selection.selectionSet ? shapeOf(selection.selectionSet) : EMPTY;
        fields += 1 + below.fields;
        if (!selection.name.value.startsWith('__')) depth = Math.max(depth, 1 + below.depth);
      } else {
        const inner =
          selection.kind === Kind.INLINE_FRAGMENT
            ? shapeOf(selection.selectionSet)
            : fragmentShape(selection.name.value);
        fields += inner.fields;
        depth = Math.max(depth, inner.depth);
      }
    }
    return { fields, depth };
  };

  const operations: Array<{ name: string | undefined; shape: Shape }> = [];
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION)
      operations.push({ name: d.name?.value, shape: shapeOf(d.selectionSet) });
  }
  const fragments = [...definitions.keys()].map((name) => ({ name, shape: fragmentShape(name) }));
  return { operations, fragments };
}

export interface ShapeLimits {
  readonly maxFields: number;
  readonly maxDepth: number;
}

/**
 * Refuses a document one of whose operations or fragments expands to more than `maxFields` fields
 * (EGGMESH_GRAPHQL_TOO_MANY_FIELDS) or nests deeper than `maxDepth` (EGGMESH_GRAPHQL_DEPTH). Run it
 * before validation: graphql's rules and graphql-jit's compiler walk the expanded selections.
 */
export function checkShape(document: DocumentNode, limits: ShapeLimits): void {
  const { operations, fragments } = documentShapes(document);
  for (const { name, shape } of operations) {
    const what = name ? `operation ${name}` : 'the operation';
    if (shape.fields > limits.maxFields) throw tooManyFields(what, shape.fields, limits.maxFields);
    if (shape.depth > limits.maxDepth) {
      throw graphqlError(
        'DEPTH',
        `${what} nests ${shape.depth} levels deep; the limit is ${limits.maxDepth}`,
      );
    }
  }
  for (const { name, shape } of fragments) {
    if (shape.fields > limits.maxFields)
      throw tooManyFields(`fragment ${name}`, shape.fields, limits.maxFields);
  }
}

const tooManyFields = (what: string, fields: number, max: number) =>
  graphqlError(
    'TOO_MANY_FIELDS',
    `${what} selects ${Number.isFinite(fields) && fields < 1e15 ? fields : 'more than 10^15'} fields once its fragments are expanded; the limit is ${max}`,
  );
