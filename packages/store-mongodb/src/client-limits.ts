import { MongoClient, type ReadPreferenceMode, type W } from 'mongodb';
import { translated } from './errors.js';

/**
 * Bounds every MongoDB client of the adapters puts on a single operation, so that no request can wait
 * for ever on a server that stopped answering: a socket silent for 20 s fails the operation with a
 * network timeout, and waiting 10 s for a pooled connection fails it too. Both surface as
 * STORE_UNAVAILABLE (a 503 for a write, not acknowledged), like an unreachable server.
 */
export const clientLimits = { socketTimeoutMS: 20_000, waitQueueTimeoutMS: 10_000 } as const;

/**
 * The longest a commit of the primary store waits, from the call (its turn in the store's queue
 * included) to its answer; past it the commit fails with STORE_UNAVAILABLE (outcome unknown) and
 * the queue moves on. The driver bounds (above) do not cover everything: a write on a pooled
 * connection whose socket the dying server closed can wait for a `drain` that never comes (the
 * mongodb driver has no timeout for writes since `timeoutMS` became a no-op), so the store bounds
 * its commits itself.
 */
export const COMMIT_DEADLINE_MS = 30_000;

export interface ConnectOptions {
  readonly uri: string;
  readonly readPreference?: ReadPreferenceMode;
  /** Write concern of every write (`majority` or a number of members); none for read-only clients. */
  readonly writeConcern?: W;
  /** How long an operation waits for a usable server before failing with STORE_UNAVAILABLE (default 10 s). */
  readonly serverSelectionTimeoutMS?: number;
}

/**
 * The one way the adapters open a client: the bounds above, a connection and one round trip to the
 * server, then `build`; driver failures become STORE_UNAVAILABLE, and the client is closed again when
 * anything fails.
 */
export async function connect<T>(
  options: ConnectOptions,
  build: (client: MongoClient) => Promise<T>,
): Promise<T> {
  const client = new MongoClient(options.uri, {
    readPreference: options.readPreference ?? 'primary',
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000,
    ...(options.writeConcern === undefined ? {} : { writeConcern: { w: options.writeConcern } }),
    ...clientLimits,
  });
  try {
    return await translated(async () => {
      await client.connect();
      await client.db('admin').command({ ping: 1 });
      return build(client);
    });
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}
