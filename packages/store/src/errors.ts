export const storeErrorCodes = {
  ALREADY_EXISTS: 'STORE_ALREADY_EXISTS',
  NOT_FOUND: 'STORE_NOT_FOUND',
  READ_ONLY: 'STORE_READ_ONLY',
  UNKNOWN_FIELD: 'STORE_UNKNOWN_FIELD',
  /** A list query names a field, comparison or cursor the entity does not take. */
  INVALID_QUERY: 'STORE_INVALID_QUERY',
  UNAVAILABLE: 'STORE_UNAVAILABLE',
  /** No room left to write (a full disk or database): nothing was written; it clears when space returns. */
  FULL: 'STORE_FULL',
  CONFLICT: 'STORE_CONFLICT',
} as const;

export type StoreErrorCode = (typeof storeErrorCodes)[keyof typeof storeErrorCodes];

/** A storage failure the caller can act on; `code` is stable, the message is for people. */
export class StoreError extends Error {
  readonly code: StoreErrorCode;
  /** Index of the failing operation in a commit, when one failed. */
  readonly index: number | undefined;
  readonly entity: string | undefined;
  readonly id: string | undefined;

  constructor(
    code: StoreErrorCode,
    message: string,
    details: { index?: number; entity?: string; id?: string; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'StoreError';
    this.code = code;
    this.index = details.index;
    this.entity = details.entity;
    this.id = details.id;
  }
}

export function isStoreError(error: unknown, code?: StoreErrorCode): error is StoreError {
  return error instanceof StoreError && (code === undefined || error.code === code);
}
