import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { inject } from 'vitest';
import { sharedMongodbUri } from '../../../infra/test/shared-servers.js';

/** The run's shared MongoDB-wire test server (infra/mongodb/vitest-global-setup.ts), started on first use. */
const uri = await sharedMongodbUri();
export const mongodbUri = (): string => uri;
export const mongodbServer = (): string => inject('mongodbServer');

/** A database name of its own for one test. */
export const freshDbName = (): string => `t_${randomUUID().replace(/-/g, '').slice(0, 20)}`;

export async function dropDatabase(uri: string, dbName: string): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
}
