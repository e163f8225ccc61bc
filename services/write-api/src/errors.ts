/**
 * Every error the write service answers with: a stable code, an HTTP status and a message template.
 * Clients match on `code`, never on the message. docs/api.md lists this table.
 */
export const errorCatalogue = {
  EGGMESH_VALIDATION: { status: 400, message: 'the request body is not a valid %s' },
  EGGMESH_BAD_JSON: { status: 400, message: 'the request body is not valid JSON' },
  EGGMESH_BAD_ID: { status: 400, message: 'the id in the path is not a UUID' },
  EGGMESH_ID_MISMATCH: { status: 400, message: 'the body id differs from the id in the path' },
  EGGMESH_BAD_QUERY: { status: 400, message: '%s' },
  EGGMESH_BAD_REQUEST: { status: 400, message: 'the HTTP request is malformed' },
  EGGMESH_BULK_TOO_LARGE: { status: 400, message: 'a bulk request takes at most %s items' },
  EGGMESH_NOT_FOUND: { status: 404, message: '%s %s was not found' },
  EGGMESH_ROUTE_NOT_FOUND: { status: 404, message: 'no route %s %s' },
  EGGMESH_METHOD_NOT_ALLOWED: { status: 405, message: '%s is not allowed on %s' },
  EGGMESH_PROJECTION_READ_ONLY: {
    status: 405,
    message: '%s is a projection: the projector owns it, so it answers GET only',
  },
  EGGMESH_ALREADY_EXISTS: { status: 409, message: '%s %s already exists' },
  EGGMESH_BODY_TOO_LARGE: { status: 413, message: 'the request body is larger than %s bytes' },
  EGGMESH_UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'send the body as application/json' },
  EGGMESH_HEADERS_TOO_LARGE: {
    status: 431,
    message: 'the request headers (or the URL) are larger than the server accepts',
  },
  EGGMESH_UNAVAILABLE: { status: 503, message: 'storage is not answering' },
  EGGMESH_INTERNAL: { status: 500, message: 'internal error' },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export interface Issue {
  readonly path: (string | number)[];
  readonly code: string;
  readonly message: string;
}

/** An error that becomes `{ error, code, ... }` with its catalogue status. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    args: readonly (string | number)[] = [],
    details: Record<string, unknown> = {},
  ) {
    const entry = errorCatalogue[code];
    let i = 0;
    super(entry.message.replace(/%s/g, () => String(args[i++] ?? '')));
    this.name = 'ApiError';
    this.code = code;
    this.statusCode = entry.status;
    this.details = details;
  }

  toBody(): Record<string, unknown> {
    return { error: this.message, code: this.code, ...this.details };
  }
}
