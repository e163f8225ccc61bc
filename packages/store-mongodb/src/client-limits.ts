/**
 * Bounds every MongoDB client of the adapters puts on a single operation, so that no request can wait
 * for ever on a server that stopped answering: a socket silent for 20 s fails the operation with a
 * network timeout, and waiting 10 s for a pooled connection fails it too. Both surface as
 * STORE_UNAVAILABLE (a 503 for a write, not acknowledged), like an unreachable server.
 */
export const clientLimits = { socketTimeoutMS: 20_000, waitQueueTimeoutMS: 10_000 } as const;
