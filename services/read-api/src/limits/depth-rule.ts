import type { ASTVisitor, SelectionSetNode, ValidationContext, ValidationRule } from 'graphql';
import { graphqlError } from '../errors.js';
import { Kind } from '../graphql/runtime.js';

const isIntrospection = (name: string): boolean => name.startsWith('__');

/**
 * Rejects operations that nest fields deeper than `maxDepth` (a root field is depth 1, each selection
 * set inside adds one; fragments add nothing of their own). Introspection fields are not counted, so
 * GraphiQL's schema query passes however deep its type references go.
 */
export function depthLimitRule(maxDepth: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const fragmentDepths = new Map<string, number>();
    const depthOf = (selectionSet: SelectionSetNode, visiting: Set<string>): number => {
      let deepest = 0;
      for (const selection of selectionSet.selections) {
        let depth = 0;
        if (selection.kind === Kind.FIELD) {
          if (isIntrospection(selection.name.value)) continue;
          depth = 1 + (selection.selectionSet ? depthOf(selection.selectionSet, visiting) : 0);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          depth = depthOf(selection.selectionSet, visiting);
        } else {
          const name = selection.name.value;
          const known = fragmentDepths.get(name);
          const fragment = context.getFragment(name);
          if (known !== undefined) depth = known;
          else if (fragment && !visiting.has(name)) {
            visiting.add(name);
            depth = depthOf(fragment.selectionSet, visiting);
            visiting.delete(name);
            fragmentDepths.set(name, depth);
          }
        }
        deepest = Math.max(deepest, depth);
      }
      return deepest;
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node.selectionSet, new Set());
        if (depth > maxDepth) {
          const name = node.name ? `operation ${node.name.value}` : 'the operation';
          context.reportError(
            graphqlError('DEPTH', `${name} nests ${depth} levels deep; the limit is ${maxDepth}`, {
              nodes: node,
            }),
          );
        }
      },
    };
  };
}
