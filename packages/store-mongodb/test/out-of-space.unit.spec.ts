import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import { isOutOfSpace, toStoreError } from '@eggmesh/store-mongodb';
import { MongoServerError } from 'mongodb';
import { describe, expect, it } from 'vitest';

describe("MongoDB's out-of-space errors", () => {
  it('become STORE_FULL: code 14031 (OutOfDiskSpace) and the messages of servers that send no such code', () => {
    const full = [
      new MongoServerError({ code: 14031, codeName: 'OutOfDiskSpace', errmsg: 'Commit failed' }),
      new MongoServerError({ errmsg: 'WiredTiger error (28) [..] No space left on device' }),
      new MongoServerError({ code: 1, errmsg: 'server is out of disk space' }),
    ];
    for (const error of full) {
      expect(isOutOfSpace(error), error.message).toBe(true);
      expect(isStoreError(toStoreError(error), storeErrorCodes.FULL), error.message).toBe(true);
    }
    const other = new MongoServerError({ code: 11000, errmsg: 'E11000 duplicate key error' });
    expect(isOutOfSpace(other)).toBe(false);
    expect(toStoreError(other)).toBe(other);
  });
});
