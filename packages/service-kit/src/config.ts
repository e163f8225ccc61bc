import { resolve } from 'node:path';
import { z } from 'zod';

const port = (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback);
const positive = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/**
 * Every setting of every eggmesh process, read from the environment once at boot.
 * docs/configuration.md documents each one; keep the two in step.
 */
export const configSchema = z.object({
  EGGMESH_DATA_DIR: z.string().min(1).default('./data'),
  EGGMESH_HOST: z.string().min(1).default('127.0.0.1'),
  WRITE_API_PORT: port(3034),
  READ_API_PORT: port(3035),
  PROJECTOR_PORT: port(3036),
  EDGE_PORT: port(5088),
  EGGMESH_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  EGGMESH_LOG_REQUESTS: z.enum(['true', 'false', '1', '0']).default('false'),
  EGGMESH_CORS_ORIGIN: z.string().min(1).default('*'),
  EGGMESH_BODY_LIMIT_BYTES: positive(1_048_576),
  EGGMESH_SQLITE_SYNC: z.enum(['normal', 'full']).default('normal'),
  EGGMESH_LIST_DEFAULT_LIMIT: positive(1000),
  EGGMESH_LIST_MAX_LIMIT: positive(10_000),
  EGGMESH_BULK_MAX_ITEMS: positive(1000),
  EGGMESH_MIN_POSITION_WAIT_MS: z.coerce.number().int().min(0).default(5000),
  EGGMESH_GRAPHQL_MAX_DEPTH: positive(8),
  EGGMESH_GRAPHQL_MAX_COST: positive(2_000_000),
  EGGMESH_GRAPHQL_MAX_FIELDS: positive(2000),
  EGGMESH_GRAPHQL_MAX_DOCUMENT_BYTES: positive(32_768),
  EGGMESH_GRAPHQL_MAX_TOKENS: positive(5000),
  EGGMESH_GRAPHQL_MAX_ROWS: positive(100_000),
  EGGMESH_GRAPHQL_MAX_RESPONSE_BYTES: positive(33_554_432),
  EGGMESH_PROJECTOR_BATCH: positive(2000),
  EGGMESH_PROJECTOR_IDLE_POLL_MS: positive(5),
  EGGMESH_SHUTDOWN_TIMEOUT_MS: positive(10_000),
  EGGMESH_WRITE_API_URL: z.string().url().optional(),
  EGGMESH_READ_API_URL: z.string().url().optional(),
});

type RawConfig = z.infer<typeof configSchema>;

export interface Config {
  readonly dataDir: string;
  readonly host: string;
  readonly ports: {
    readonly write: number;
    readonly read: number;
    readonly projector: number;
    readonly edge: number;
  };
  readonly logLevel: RawConfig['EGGMESH_LOG_LEVEL'];
  /** Log a line per request (off by default: it costs throughput). */
  readonly logRequests: boolean;
  readonly corsOrigin: string;
  readonly bodyLimitBytes: number;
  readonly sqliteSync: RawConfig['EGGMESH_SQLITE_SYNC'];
  readonly list: { readonly defaultLimit: number; readonly maxLimit: number };
  readonly bulkMaxItems: number;
  readonly minPositionWaitMs: number;
  readonly graphql: {
    readonly maxDepth: number;
    readonly maxCost: number;
    /** Most fields an operation may select once its fragments are expanded (aliases count each). */
    readonly maxFields: number;
    /** Longest query document accepted, in UTF-8 bytes. */
    readonly maxDocumentBytes: number;
    /** Most lexical tokens in a query document. */
    readonly maxTokens: number;
    /** Most rows one response may carry (every root and relation row counts). */
    readonly maxRows: number;
    /** Most bytes (estimated from the rows read) one response may carry. */
    readonly maxResponseBytes: number;
  };
  readonly projector: { readonly batchSize: number; readonly idlePollMs: number };
  readonly shutdownTimeoutMs: number;
  /** Where the edge forwards; defaults to the local services. */
  readonly upstreams: { readonly write: string; readonly read: string };
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Parses the environment into a frozen config; a bad value stops the process with every problem listed. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const c = result.data;
  if (c.EGGMESH_LIST_DEFAULT_LIMIT > c.EGGMESH_LIST_MAX_LIMIT) {
    throw new ConfigError(
      'invalid configuration:\n  EGGMESH_LIST_DEFAULT_LIMIT must not exceed EGGMESH_LIST_MAX_LIMIT',
    );
  }
  const local = (p: number) =>
    `http://${c.EGGMESH_HOST.includes(':') ? `[${c.EGGMESH_HOST}]` : c.EGGMESH_HOST}:${p}`;
  return Object.freeze({
    dataDir: resolve(c.EGGMESH_DATA_DIR),
    host: c.EGGMESH_HOST,
    ports: Object.freeze({
      write: c.WRITE_API_PORT,
      read: c.READ_API_PORT,
      projector: c.PROJECTOR_PORT,
      edge: c.EDGE_PORT,
    }),
    logLevel: c.EGGMESH_LOG_LEVEL,
    logRequests: c.EGGMESH_LOG_REQUESTS === 'true' || c.EGGMESH_LOG_REQUESTS === '1',
    corsOrigin: c.EGGMESH_CORS_ORIGIN,
    bodyLimitBytes: c.EGGMESH_BODY_LIMIT_BYTES,
    sqliteSync: c.EGGMESH_SQLITE_SYNC,
    list: Object.freeze({ defaultLimit: c.EGGMESH_LIST_DEFAULT_LIMIT, maxLimit: c.EGGMESH_LIST_MAX_LIMIT }),
    bulkMaxItems: c.EGGMESH_BULK_MAX_ITEMS,
    minPositionWaitMs: c.EGGMESH_MIN_POSITION_WAIT_MS,
    graphql: Object.freeze({
      maxDepth: c.EGGMESH_GRAPHQL_MAX_DEPTH,
      maxCost: c.EGGMESH_GRAPHQL_MAX_COST,
      maxFields: c.EGGMESH_GRAPHQL_MAX_FIELDS,
      maxDocumentBytes: c.EGGMESH_GRAPHQL_MAX_DOCUMENT_BYTES,
      maxTokens: c.EGGMESH_GRAPHQL_MAX_TOKENS,
      maxRows: c.EGGMESH_GRAPHQL_MAX_ROWS,
      maxResponseBytes: c.EGGMESH_GRAPHQL_MAX_RESPONSE_BYTES,
    }),
    projector: Object.freeze({
      batchSize: c.EGGMESH_PROJECTOR_BATCH,
      idlePollMs: c.EGGMESH_PROJECTOR_IDLE_POLL_MS,
    }),
    shutdownTimeoutMs: c.EGGMESH_SHUTDOWN_TIMEOUT_MS,
    upstreams: Object.freeze({
      write: c.EGGMESH_WRITE_API_URL ?? local(c.WRITE_API_PORT),
      read: c.EGGMESH_READ_API_URL ?? local(c.READ_API_PORT),
    }),
  });
}
