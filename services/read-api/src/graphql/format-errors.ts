import type { FastifyBaseLogger } from 'fastify';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { classificationOf, type GraphqlErrorName, graphqlErrors, statusOf } from '../errors.js';
import { GraphQLError } from './runtime.js';

interface Coded {
  readonly error: GraphQLError;
  readonly code: string;
  readonly status: number;
}

const withCode = (error: GraphQLError, name: GraphqlErrorName, status?: number): Coded => ({
  error,
  code: graphqlErrors[name].code,
  status: status ?? graphqlErrors[name].status,
});

const asGraphQLError = (error: unknown): GraphQLError =>
  error instanceof GraphQLError
    ? error
    : new GraphQLError(error instanceof Error ? error.message : String(error), {
        originalError: error instanceof Error ? error : null,
      });

const httpStatusOf = (error: unknown): number | undefined => {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
};

/** An error mercurius raised while reading the request, parsing or validating: it wraps the real ones. */
const innerErrorsOf = (error: GraphQLError): unknown[] | undefined => {
  const inner = (error.originalError as { errors?: unknown } | undefined)?.errors;
  return Array.isArray(inner) ? inner : undefined;
};

/** The parser's `maxTokens` refusal (graphql 16 spells it "more that"). */
const TOO_MANY_TOKENS = /^Syntax Error: Document contains more (that|than) \d+ tokens/;

/** A scalar refusing a value on output: "Int cannot represent …" (graphql's), "SafeInt cannot …" (ours). */
const SERIALIZE_FAILED = /^(Int|Float|String|Boolean|ID|SafeInt) cannot represent /;

/** Errors raised before execution, from the parse, validate or HTTP-reading step. */
function classifyRequestError(error: unknown): Coded {
  const gql = asGraphQLError(error);
  if (statusOf(gql.extensions?.code) !== undefined) return withCode(gql, nameOf(gql.extensions?.code));
  if (error instanceof GraphQLError) {
    // graphql-js's syntaxError() is the only source of this prefix: the parse step failed.
    if (TOO_MANY_TOKENS.test(error.message)) return withCode(gql, 'TOO_LARGE');
    return withCode(gql, error.message.startsWith('Syntax Error:') ? 'PARSE_FAILED' : 'VALIDATION_FAILED');
  }
  // Not a GraphQLError: the route's body/querystring schema or the JSON of GET variables.
  return withCode(gql, 'BAD_REQUEST');
}

function nameOf(code: unknown): GraphqlErrorName {
  const entry = Object.entries(graphqlErrors).find(([, e]) => e.code === code);
  return (entry?.[0] ?? 'INTERNAL') as GraphqlErrorName;
}

function classify(error: GraphQLError, log: FastifyBaseLogger): Coded[] {
  const inner = innerErrorsOf(error);
  if (inner) return inner.map(classifyRequestError);
  // graphql-jit's errors leave `extensions` undefined unless their cause had some.
  const code = error.extensions?.code;
  if (statusOf(code) !== undefined) return [withCode(error, nameOf(code))];
  const original = error.originalError;
  const badRequestStatus = httpStatusOf(original);
  if (badRequestStatus !== undefined && !error.path) {
    // Fastify or mercurius refused the HTTP request (no query, malformed JSON, wrong method, too large).
    return [withCode(error, 'BAD_REQUEST', badRequestStatus)];
  }
  if (!original && !error.path) {
    // graphql's execute refused the operation itself (unknown operationName, no mutation type, …).
    return [withCode(error, 'VALIDATION_FAILED')];
  }
  if (error.path && SERIALIZE_FAILED.test(original?.message ?? error.message)) {
    // A scalar refused a stored value (an Int beyond 32 bits in old data): that field only. graphql
    // keeps the scalar's error as the cause; graphql-jit's compiled queries keep only its message.
    log.warn({ path: error.path }, error.message);
    return [withCode(error, 'BAD_VALUE')];
  }
  log.error({ err: original ?? error }, 'graphql execution failed');
  // Our own code or the store threw: keep the cause in the log, not in the response.
  const safe = original
    ? new GraphQLError('internal error', { nodes: error.nodes ?? null, path: error.path ?? null })
    : error;
  return [withCode(safe, 'INTERNAL')];
}

type Execution = ExecutionResult & { readonly errors: readonly GraphQLError[] };

/**
 * Mercurius error formatter: every error gets a stable `extensions.code`; a request that produced data
 * answers 200, one refused before execution 400 (or the HTTP status Fastify chose), a failure 500.
 */
export function formatErrors(
  execution: Execution,
  context: {
    reply?: { log: FastifyBaseLogger };
    app: { log: FastifyBaseLogger };
    read?: { readonly exceeded: string | undefined };
  },
): {
  statusCode: number;
  response: { data: ExecutionResult['data'] | null; errors: GraphQLFormattedError[] };
} {
  const log = context.reply?.log ?? context.app.log;
  const exceeded = context.read?.exceeded;
  if (exceeded) {
    // Over the response budget: refuse the whole answer rather than send a partial one.
    log.info({ code: graphqlErrors.RESPONSE_TOO_LARGE.code }, exceeded);
    const { code, status } = graphqlErrors.RESPONSE_TOO_LARGE;
    return {
      statusCode: status,
      response: { data: null, errors: [{ message: exceeded, extensions: { code } }] },
    };
  }
  const coded = execution.errors.flatMap((e) => classify(e, log));
  const errors = coded.map(({ error, code }) => {
    const json = error.toJSON();
    const classification = classificationOf(code);
    return {
      ...json,
      extensions: { ...json.extensions, code, ...(classification ? { classification } : {}) },
    };
  });
  for (const { error, code } of coded)
    if (code !== graphqlErrors.INTERNAL.code) log.info({ code }, error.message);
  const statusCode = execution.data
    ? 200
    : coded.some((c) => c.status >= 500)
      ? 500
      : (coded[0]?.status ?? 500);
  return { statusCode, response: { data: execution.data ?? null, errors } };
}
