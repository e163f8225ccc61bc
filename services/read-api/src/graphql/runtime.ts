/**
 * The graphql values this package uses, taken from graphql's CommonJS build: the one mercurius and
 * graphql-jit load. A bare `import from 'graphql'` resolves to the same file under Node, but bundler-style
 * resolvers (vitest) pick the `module` build (index.mjs), and a second copy breaks graphql's
 * `instanceof` checks (GraphQLError, isObjectType, …).
 */
export {
  GraphQLError,
  getNamedType,
  getNullableType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  specifiedRules,
  validate,
} from 'graphql/index.js';
