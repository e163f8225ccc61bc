/**
 * Every error code any eggmesh service answers with: its HTTP status and a message template (`%s` is
 * filled from the arguments, in order). One table for the write-api, the read-api (GraphQL errors carry
 * the code in `extensions.code`), the read-api's forwarding and the projector. Clients match on the code, never on the
 * message. docs/api.md lists every code of this table and no other; a test pins the two together.
 */
export const errorTable = {
  // Requests a service refuses as malformed.
  EGGMESH_VALIDATION: { status: 400, message: 'the request body is not a valid %s' },
  EGGMESH_BAD_JSON: { status: 400, message: 'the request body is not valid JSON' },
  EGGMESH_BAD_ID: { status: 400, message: 'the id in the path is not a UUID' },
  EGGMESH_ID_MISMATCH: { status: 400, message: 'the body id differs from the id in the path' },
  EGGMESH_BAD_QUERY: { status: 400, message: '%s' },
  EGGMESH_BAD_REQUEST: { status: 400, message: 'the HTTP request is malformed' },
  EGGMESH_BULK_TOO_LARGE: { status: 400, message: 'a bulk request takes at most %s items' },
  // Who may ask.
  EGGMESH_UNAUTHENTICATED: { status: 401, message: 'a valid bearer token is required' },
  EGGMESH_FORBIDDEN: { status: 403, message: 'the token does not grant %s' },
  // What does not exist, or not that way.
  EGGMESH_NOT_FOUND: { status: 404, message: '%s %s was not found' },
  EGGMESH_ROUTE_NOT_FOUND: { status: 404, message: 'no route %s %s' },
  EGGMESH_METHOD_NOT_ALLOWED: { status: 405, message: '%s is not allowed on %s' },
  EGGMESH_PROJECTION_READ_ONLY: {
    status: 405,
    message: '%s is a projection: the projector owns it, so it answers GET only',
  },
  EGGMESH_REQUEST_TIMEOUT: {
    status: 408,
    message: 'the request (its headers or its body) took too long to arrive',
  },
  EGGMESH_ALREADY_EXISTS: { status: 409, message: '%s %s already exists' },
  // Limits.
  EGGMESH_BODY_TOO_LARGE: { status: 413, message: 'the request body is larger than %s bytes' },
  EGGMESH_UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'send the body as application/json' },
  EGGMESH_RATE_LIMITED: {
    status: 429,
    message: 'more than %s requests in a minute from this client; retry after %s s',
  },
  EGGMESH_HEADERS_TOO_LARGE: {
    status: 431,
    message: 'the request headers (or the URL) are larger than the server accepts',
  },
  // The server's side.
  EGGMESH_INTERNAL: { status: 500, message: 'internal error' },
  EGGMESH_UPSTREAM_UNAVAILABLE: { status: 502, message: 'the %s did not answer' },
  EGGMESH_UNAVAILABLE: { status: 503, message: 'storage is not answering' },
  EGGMESH_OVERLOADED: {
    status: 503,
    message: 'the service is overloaded; retry after %s s',
  },
  EGGMESH_STORAGE_FULL: {
    status: 507,
    message: 'storage is full: nothing was written; retry after %s s',
  },
  EGGMESH_UPSTREAM_TIMEOUT: { status: 504, message: 'the %s did not answer in time' },
  // GraphQL (read-api), in `errors[].extensions.code`; the status is the response's when the error
  // stops the whole request.
  GRAPHQL_PARSE_FAILED: { status: 400, message: 'the query is not valid GraphQL syntax' },
  GRAPHQL_VALIDATION_FAILED: {
    status: 400,
    message: 'the query does not fit the schema, or its variables do not fit their types',
  },
  EGGMESH_GRAPHQL_BAD_REQUEST: {
    status: 400,
    message: 'not a GraphQL request (no query, malformed JSON body or variables)',
  },
  EGGMESH_GRAPHQL_DEPTH: { status: 400, message: 'the query nests deeper than the depth limit' },
  EGGMESH_GRAPHQL_TOO_LARGE: {
    status: 400,
    message: 'the query document is too long, has too many tokens, or nests brackets too deep',
  },
  EGGMESH_GRAPHQL_TOO_MANY_FIELDS: {
    status: 400,
    message: 'an operation or fragment selects too many fields once its fragments are expanded',
  },
  EGGMESH_GRAPHQL_COST: { status: 400, message: 'the estimated number of rows exceeds the cost limit' },
  EGGMESH_TOO_MANY_SUBSCRIPTIONS: {
    status: 429,
    message: 'the connection or the client holds as many live subscriptions as it may',
  },
  EGGMESH_GRAPHQL_RESPONSE_TOO_LARGE: {
    status: 400,
    message: 'the answer would carry too many rows or bytes; page with limit/after',
  },
  EGGMESH_GRAPHQL_BAD_MIN_POSITION: {
    status: 400,
    message: 'the x-min-position header is not a non-negative integer',
  },
  EGGMESH_GRAPHQL_BAD_VALUE: { status: 500, message: 'a stored value does not fit its GraphQL type' },
  INTERNAL_SERVER_ERROR: { status: 500, message: 'the server failed; the log has the cause' },
} as const satisfies Record<string, { readonly status: number; readonly message: string }>;

export type ErrorCode = keyof typeof errorTable;

const codes = new Set<string>(Object.keys(errorTable));

/** True for a code of the table. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && codes.has(code);
}

/** The message of a code's template with its `%s` filled from `args`, in order. */
export function errorMessage(code: ErrorCode, args: readonly (string | number)[] = []): string {
  let i = 0;
  return errorTable[code].message.replace(/%s/g, () => String(args[i++] ?? ''));
}

/**
 * An error that answers `{ "error": message, "code": code, ...details }` with its code's status.
 * The message is the code's template filled from `args`; `message` replaces it where the service
 * knows better (the read-api names the service that did not answer).
 */
export class EggmeshError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    args: readonly (string | number)[] = [],
    details: Record<string, unknown> = {},
    message?: string,
  ) {
    // A 4xx is an answer to the client's mistake, not a fault of ours: capturing its stack cost 1.6 % of
    // the write-api's CPU on a load where one request in six is a 404. A 5xx keeps its stack.
    const stackFrames = Error.stackTraceLimit;
    if (errorTable[code].status < 500) Error.stackTraceLimit = 0;
    super(message ?? errorMessage(code, args));
    Error.stackTraceLimit = stackFrames;
    this.name = 'EggmeshError';
    this.code = code;
    this.statusCode = errorTable[code].status;
    this.details = details;
  }

  toBody(): { error: string; code: ErrorCode } & Record<string, unknown> {
    return { error: this.message, code: this.code, ...this.details };
  }
}
