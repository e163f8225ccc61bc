import { StoreError, storeErrorCodes } from '@eggmesh/store';
import {
  MongoBulkWriteError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';

/** Server codes meaning "no usable primary right now": shutdown, step-down, election. */
const NOT_AVAILABLE_CODES = new Set([91, 189, 10107, 11600, 11602, 13435, 13436]);

/**
 * Socket failures the driver lets through as plain Node errors: a write on a connection the server
 * closed ("This socket has been ended by the other party", EPIPE) rejects the driver's wait for
 * `drain` with the socket's own error, not a MongoNetworkError.
 */
const SOCKET_CODES = new Set([
  'EPIPE',
  'ECONNRESET',
  'ECONNABORTED',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
]);

/** True when no usable server could be reached (the outcome of a write in flight is unknown). */
export function isUnreachable(error: unknown): boolean {
  return (
    (error instanceof Error && 'code' in error && SOCKET_CODES.has(String(error.code))) ||
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoServerClosedError ||
    // No pooled connection within waitQueueTimeoutMS (the driver does not export its class).
    (error instanceof Error && error.name === 'MongoWaitQueueTimeoutError') ||
    (error instanceof MongoServerError &&
      typeof error.code === 'number' &&
      NOT_AVAILABLE_CODES.has(error.code))
  );
}

/** E11000: a unique index refused the document (which one, the caller decides by reading). */
export function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === 11000;
}

/** MongoDB's OutOfDiskSpace (14031), and the out-of-space messages of servers that send no code for it. */
export function isOutOfSpace(error: unknown): boolean {
  if (!(error instanceof MongoServerError)) return false;
  return (
    error.code === 14031 ||
    error.codeName === 'OutOfDiskSpace' ||
    /no space left on device|out of disk space|disk is full|OutOfDiskSpace/i.test(error.message)
  );
}

/** Translates driver failures into the port's stable codes; anything else passes through. */
export function toStoreError(error: unknown): unknown {
  if (error instanceof StoreError) return error;
  if (isOutOfSpace(error)) {
    return new StoreError(storeErrorCodes.FULL, `MongoDB has no room to write: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (isUnreachable(error)) {
    return new StoreError(
      storeErrorCodes.UNAVAILABLE,
      `MongoDB is unreachable: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return error;
}

/**
 * Answers what `work` answers, or fails with STORE_UNAVAILABLE once `ms` passed (calling `onExpire`
 * first). `work` itself is not stopped: the caller tells it through a signal that nobody waits any more.
 */
export function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  what: string,
  onExpire?: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        onExpire?.();
        reject(
          new StoreError(
            storeErrorCodes.UNAVAILABLE,
            `MongoDB did not answer ${what} within ${ms} ms; its outcome is unknown`,
          ),
        );
      },
      Math.max(0, ms),
    );
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** Runs `work`, rethrowing driver failures as StoreErrors. */
export async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toStoreError(error);
  }
}

/** Swallows duplicate-key failures (an idempotent re-apply); rethrows anything else as a StoreError where it is one. */
export function ignoreDuplicate(error: unknown): void {
  if (error instanceof MongoBulkWriteError) {
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (writeErrors.length > 0 && writeErrors.every((e) => e.code === 11000)) return;
    throw error;
  }
  if (isDuplicateKey(error)) return;
  throw toStoreError(error);
}
