import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { inject } from 'vitest';
import { sharedFerretdbUri, sharedMongodbUri } from '../../../infra/test/shared-servers.js';

/** The run's shared MongoDB-wire test server (infra/mongodb/vitest-global-setup.ts), started on first use. */
const uri = await sharedMongodbUri();
export const mongodbUri = (): string => uri;
export const mongodbServer = (): string => inject('mongodbServer');

/** A MongoDB-wire server the contract suites run on. */
export interface WireServer {
  /** For test names: which server, which version. */
  readonly name: string;
  readonly uri: string;
  /** FerretDB lacks guarantees that the tests name (see `needs`). */
  readonly kind: 'emulator' | 'ferretdb';
}

/**
 * The servers the adapter's contract suites run on: the run's MongoDB-wire server (mongo-java-server,
 * or the one EGGMESH_TEST_MONGODB_URI names) and FerretDB (infra/ferretdb), a MongoDB-wire server
 * written by others. Asking starts FerretDB, so only the files that run on both ask.
 */
export async function contractServers(): Promise<WireServer[]> {
  return [
    { name: mongodbServer(), uri, kind: 'emulator' },
    { name: inject('ferretdbServer'), uri: await sharedFerretdbUri(), kind: 'ferretdb' },
  ];
}

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
