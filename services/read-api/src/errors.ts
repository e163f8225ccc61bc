import { type ErrorCode, errorTable } from '@eggmesh/service-kit';
import type { ASTNode } from 'graphql';
import { GraphQLError } from './graphql/runtime.js';

/** A code of service-kit's one error table, with its status from there and what it means here. */
const entry = <C extends ErrorCode>(code: C, summary: string) =>
  ({ code, status: errorTable[code].status, summary }) as const;

/**
 * Every error the read API returns carries one of these codes in `extensions.code`, with the HTTP
 * status (service-kit's error table) the response gets when the error stops the whole request.
 * README.md lists them; a test pins the two together.
 */
export const graphqlErrors = {
  PARSE_FAILED: entry('GRAPHQL_PARSE_FAILED', 'the query is not valid GraphQL syntax'),
  VALIDATION_FAILED: entry(
    'GRAPHQL_VALIDATION_FAILED',
    'the query does not fit the schema, or its variables do not fit their types',
  ),
  BAD_REQUEST: entry(
    'EGGMESH_GRAPHQL_BAD_REQUEST',
    'the HTTP request is not a GraphQL request (no query, malformed JSON body or variables)',
  ),
  DEPTH: entry('EGGMESH_GRAPHQL_DEPTH', 'the query nests deeper than the depth limit'),
  TOO_LARGE: entry(
    'EGGMESH_GRAPHQL_TOO_LARGE',
    'the query document is longer than `EGGMESH_GRAPHQL_MAX_DOCUMENT_BYTES`, has more than 5,000 tokens, or nests brackets too deep; refused before parsing',
  ),
  TOO_MANY_FIELDS: entry(
    'EGGMESH_GRAPHQL_TOO_MANY_FIELDS',
    'an operation or fragment selects more than 2,000 fields once its fragments are expanded',
  ),
  COST: entry('EGGMESH_GRAPHQL_COST', 'the estimated number of rows exceeds the cost limit'),
  TOO_MANY_SUBSCRIPTIONS: entry(
    'EGGMESH_TOO_MANY_SUBSCRIPTIONS',
    'a subscription over 20 on its connection or 1000 for its client address',
  ),
  RESPONSE_TOO_LARGE: entry(
    'EGGMESH_GRAPHQL_RESPONSE_TOO_LARGE',
    'the answer would carry more than 100,000 rows or 32 MiB; page with `limit`/`after`',
  ),
  BAD_MIN_POSITION: entry(
    'EGGMESH_GRAPHQL_BAD_MIN_POSITION',
    'the `x-min-position` header is not a non-negative integer',
  ),
  BAD_ID: {
    ...entry(
      'EGGMESH_BAD_ID',
      'an `id` argument is not a UUID (the code REST answers for such an id); reported on its field, which answers null, status 200',
    ),
    classification: 'ValidationError',
  },
  BAD_QUERY: {
    ...entry(
      'EGGMESH_BAD_QUERY',
      'an argument is out of range: `limit` outside 1..`EGGMESH_LIST_MAX_LIMIT`, a negative `at` (the code REST answers for `?limit=`/`?at=`); reported on its field, which answers null, status 200',
    ),
    classification: 'ValidationError',
  },
  BAD_VALUE: entry(
    'EGGMESH_GRAPHQL_BAD_VALUE',
    'a stored value does not fit its GraphQL type (an Int beyond 32 bits, a SafeInt beyond 2^53): that field is null, the rest of the response answers 200',
  ),
  INTERNAL: entry('INTERNAL_SERVER_ERROR', 'the server failed; the log has the cause'),
} as const;

export type GraphqlErrorName = keyof typeof graphqlErrors;
export type GraphqlErrorCode = (typeof graphqlErrors)[GraphqlErrorName]['code'];

const statusByCode = new Map<string, number>(Object.values(graphqlErrors).map((e) => [e.code, e.status]));

/** The HTTP status an error code stands for, or undefined for a code this package does not define. */
export function statusOf(code: unknown): number | undefined {
  return typeof code === 'string' ? statusByCode.get(code) : undefined;
}

/**
 * `extensions.classification` of an error that is the client's mistake although it sits on a field
 * (a bad argument): graphql-java's name for it, which generic clients and tools (schemathesis) read to
 * tell such errors from server failures.
 */
export function classificationOf(code: unknown): string | undefined {
  const entry = Object.values(graphqlErrors).find((e) => e.code === code);
  return entry && 'classification' in entry ? entry.classification : undefined;
}

/** A GraphQL error carrying one of our codes. */
export function graphqlError(
  name: GraphqlErrorName,
  message: string,
  options: { nodes?: ASTNode | readonly ASTNode[] } = {},
): GraphQLError {
  return new GraphQLError(message, { ...options, extensions: { code: graphqlErrors[name].code } });
}

/** Codes of the plain HTTP routes (not GraphQL); the same codes as the write-api's. */
export const httpErrors = {
  ROUTE_NOT_FOUND: entry('EGGMESH_ROUTE_NOT_FOUND', 'unknown path'),
  METHOD_NOT_ALLOWED: entry(
    'EGGMESH_METHOD_NOT_ALLOWED',
    'known path, wrong method (`Allow` header lists the right ones)',
  ),
  UNAVAILABLE: entry('EGGMESH_UNAVAILABLE', '`/ready` when the store does not answer'),
  INTERNAL: entry('EGGMESH_INTERNAL', 'a bug: logged with its stack'),
} as const;
