import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import { unknownEnvWarnings } from './env-check.js';

/** Where docs/configuration.md lists a setting. */
export type Section =
  | 'deployment'
  | 'storage'
  | 'security'
  | 'logging'
  | 'local servers'
  | 'limits'
  | 'legacy';

/** One environment variable: how its text is read, its default (none: optional) and where it is documented. */
export interface Setting<T = unknown, D extends string | undefined = string | undefined> {
  readonly section: Section;
  /** The text a variable left unset stands for; undefined: the setting is optional (or derived). */
  readonly default: D;
  /** What a value must be, for error messages ("a whole number from 0 to 65535"). */
  readonly expected: string;
  /** Reads a set value; fails with `expected` in the message. */
  readonly read: z.ZodType<T, string>;
  /** Error messages never quote it (secrets). */
  readonly secret?: boolean;
}

const setting = <T, D extends string | undefined>(
  section: Section,
  fallback: D,
  expected: string,
  read: z.ZodType<T, string>,
  secret = false,
): Setting<T, D> =>
  Object.freeze({ section, default: fallback, expected, read, ...(secret ? { secret } : {}) });

/** A whole number in plain decimal digits (not `8e3`, `0x1f`, ` 8 ` or `8.0`), within min..max. */
const int = (section: Section, fallback: number, min: number, max?: number) =>
  setting(
    section,
    String(fallback),
    max === undefined ? `a whole number, ${min} or more` : `a whole number from ${min} to ${max}`,
    z
      .string()
      .regex(/^[0-9]+$/)
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .min(min)
          .max(max ?? Number.MAX_SAFE_INTEGER),
      ),
  );
const port = (fallback: number) => int('deployment', fallback, 0, 65_535);
const oneOf = <const V extends string>(
  section: Section,
  values: readonly [V, ...V[]],
  fallback: NoInfer<V>,
) => setting(section, fallback, `one of ${values.join(', ')}`, z.enum(values));
const flag = (section: Section) =>
  setting(section, 'false', 'one of true, false, 1, 0', z.enum(['true', 'false', '1', '0']).transform(isOn));
function text(section: Section): Setting<string, undefined>;
function text(section: Section, fallback: string): Setting<string, string>;
function text(section: Section, fallback?: string): Setting<string> {
  return setting(section, fallback, 'a value', z.string());
}
const url = (section: Section) =>
  setting(
    section,
    undefined,
    'a URL such as http://127.0.0.1:3034',
    z
      .string()
      .transform((raw) => raw.trim().replace(/[\t\n\r]/g, ''))
      .refine((value) => URL.canParse(value)),
  );
const isOn = (value: string) => value === 'true' || value === '1';

/** The origins browser pages may call from: none (false), any (`*`), or the ones listed. */
export type CorsOrigin = false | '*' | readonly string[];
/** An origin as a browser sends it: scheme, host and port, nothing else. */
const isOrigin = (entry: string) => URL.canParse(entry) && new URL(entry).origin === entry;

const PROXY_KEYWORDS = new Set(['loopback', 'linklocal', 'uniquelocal']);
/** One entry of a trusted-proxy list: an address, a CIDR range, or one of proxy-addr's keywords. */
const isProxyEntry = (entry: string) => {
  if (PROXY_KEYWORDS.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  return (
    family !== 0 &&
    rest.length === 0 &&
    (prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= bits))
  );
};
/** `none`, or addresses, CIDR ranges and keywords separated by commas, as Fastify's `trustProxy` takes them. */
const proxies = (section: Section, fallback: string) =>
  setting(
    section,
    fallback,
    'addresses, CIDR ranges, loopback, linklocal or uniquelocal separated by commas (or none)',
    z
      .string()
      .transform((raw) => (raw.trim() === 'none' ? [] : raw.split(',').map((entry) => entry.trim())))
      .refine((entries) => entries.every(isProxyEntry))
      .transform((entries) => Object.freeze(entries) as readonly string[]),
  );

/** A MongoDB connection string; group 3 is the database its path names, if any. */
const MONGODB_URI = /^mongodb(\+srv)?:\/\/([^/?]+)(?:\/([^?]*))?(?:\?.*)?$/;

/**
 * Where the projections live: the deployment and database EGGMESH_MONGODB_PROJECTIONS_URI names (its
 * path is the database; none: EGGMESH_MONGODB_DB), else the write store's own database.
 */
function projectionsDatabase(
  raw: string | undefined,
  uri: string,
  dbName: string,
): Readonly<{ uri: string; dbName: string }> {
  if (raw === undefined || raw.trim() === '') return Object.freeze({ uri, dbName });
  const value = raw.trim();
  const path = MONGODB_URI.exec(value)?.[3];
  return Object.freeze({ uri: value, dbName: path ? decodeURIComponent(path) : dbName });
}

/**
 * Every environment variable of every eggmesh process, once: how it is read, its default, and the
 * section of docs/configuration.md that documents it. Parsing, `--help` and the check for typos all
 * come from this table; the services read slices of it (below).
 */
export const settings = Object.freeze({
  EGGMESH_HOST: text('deployment', '127.0.0.1'),
  WRITE_API_PORT: port(3034),
  READ_API_PORT: port(5088),
  PROJECTOR_PORT: port(3036),
  RELAY_PORT: port(3037),
  EGGMESH_WRITE_API_URL: url('deployment'),
  EGGMESH_STORE: oneOf('storage', ['sqlite', 'mongodb'], 'sqlite'),
  EGGMESH_DATA_DIR: text('storage', './data'),
  EGGMESH_SQLITE_SYNC: oneOf('storage', ['normal', 'full'], 'normal'),
  EGGMESH_MONGODB_URI: text('storage', 'mongodb://127.0.0.1:27017'),
  EGGMESH_MONGODB_DB: text('storage', 'eggmesh'),
  EGGMESH_MONGODB_PROJECTIONS_URI: setting(
    'storage',
    undefined,
    'a mongodb:// or mongodb+srv:// connection string',
    z.string().refine((raw) => MONGODB_URI.test(raw.trim())),
  ),
  EGGMESH_LOG: oneOf('storage', ['store', 'kafka'], 'store'),
  EGGMESH_KAFKA_BROKERS: text('storage', '127.0.0.1:9092'),
  EGGMESH_KAFKA_TOPIC: text('storage', 'eggmesh.events'),
  EGGMESH_KAFKA_REPLICATION_FACTOR: int('storage', 1, 1, 32),
  EGGMESH_KAFKA_MIN_INSYNC_REPLICAS: int('storage', 1, 1, 32),
  EGGMESH_AUTH: oneOf('security', ['none', 'jwt'], 'none'),
  EGGMESH_JWT_SECRET: setting(
    'security',
    undefined,
    'an HS256 secret of at least 32 characters',
    z.string().min(32),
    true,
  ),
  EGGMESH_JWKS: text('security'),
  EGGMESH_JWT_ISSUER: text('security'),
  EGGMESH_JWT_AUDIENCE: text('security'),
  EGGMESH_JWT_CLOCK_SKEW_S: int('security', 30, 0, 300),
  EGGMESH_JWT_MAX_LIFETIME_S: int('security', 86_400, 1),
  EGGMESH_AUTH_READS: flag('security'),
  EGGMESH_CORS_ORIGIN: setting(
    'security',
    'none',
    'none, *, or origins such as https://app.example separated by commas',
    z
      .string()
      .transform((raw): CorsOrigin => {
        const value = raw.trim();
        if (value === 'none') return false;
        if (value === '*') return '*';
        return Object.freeze(value.split(',').map((entry) => entry.trim().replace(/\/$/, '')));
      })
      .refine((origin) => typeof origin !== 'object' || origin.every(isOrigin)),
  ),
  EGGMESH_RATE_LIMIT_PER_MIN: int('security', 0, 0),
  EGGMESH_TRUSTED_PROXIES: proxies('security', 'loopback'),
  EGGMESH_LOG_LEVEL: oneOf('logging', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  EGGMESH_LOG_REQUESTS: flag('logging'),
  EGGMESH_DEV_MONGODB_PORT: int('local servers', 27017, 0, 65_535),
  EGGMESH_DEV_KAFKA_PORT: int('local servers', 9092, 0, 65_535),
  EGGMESH_DEV_POSTGRES_PORT: int('local servers', 5432, 0, 65_535),
  EGGMESH_DEV_CONNECT_PORT: int('local servers', 8083, 0, 65_535),
  EGGMESH_BODY_LIMIT_BYTES: int('limits', 1_048_576, 1),
  EGGMESH_BULK_MAX_ITEMS: int('limits', 1000, 1),
  EGGMESH_LIST_DEFAULT_LIMIT: int('limits', 1000, 1),
  EGGMESH_LIST_MAX_LIMIT: int('limits', 10_000, 1),
  EGGMESH_MAX_FUTURE_MS: int('limits', 86_400_000, 0),
  EGGMESH_ID_VERSION: oneOf('limits', ['7', '4'], '7'),
  EGGMESH_MIN_POSITION_WAIT_MS: int('limits', 5000, 0),
  EGGMESH_GRAPHQL_MAX_DEPTH: int('limits', 8, 1),
  EGGMESH_GRAPHQL_MAX_COST: int('limits', 2_000_000, 1),
  EGGMESH_GRAPHQL_MAX_DOCUMENT_BYTES: int('limits', 32_768, 1),
  EGGMESH_HTTP_HEADERS_TIMEOUT_MS: int('limits', 10_000, 1),
  EGGMESH_HTTP_REQUEST_TIMEOUT_MS: int('limits', 30_000, 1),
  EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS: int('limits', 10_000, 1),
  EGGMESH_HTTP_MAX_CONNECTIONS: int('limits', 4096, 1),
  LEGACY_SYNC_PORT: int('legacy', 3038, 0, 65_535),
  EGGMESH_LEGACY_SOURCE: oneOf('legacy', ['sap', 'salesforce'], 'sap'),
  EGGMESH_LEGACY_TOPIC_PREFIX: text('legacy', 'legacy'),
  EGGMESH_LEGACY_CONNECT_URL: url('legacy'),
  EGGMESH_LEGACY_DB_URL: url('legacy'),
});

export type SettingName = keyof typeof settings;
/** Each setting as read: a setting without a default may be absent. */
type Values<N extends SettingName> = {
  readonly [K in N]: (typeof settings)[K] extends Setting<infer T, infer D>
    ? D extends string
      ? T
      : T | undefined
    : never;
};

/** The zod schema of one variable: unset gives its default, empty is refused, a bad value is quoted. */
function variable(name: SettingName) {
  const s: Setting = settings[name];
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const value = raw ?? s.default;
      if (value === undefined) return undefined;
      if (value === '') {
        const fallback = s.default === undefined ? '' : ` for the default ${s.default}`;
        ctx.addIssue({
          code: 'custom',
          message: `"" is empty; expected ${s.expected}, or leave it unset${fallback}`,
        });
        return z.NEVER;
      }
      const read = s.read.safeParse(value);
      if (read.success) return read.data;
      ctx.addIssue({
        code: 'custom',
        message: s.secret
          ? `${s.expected} (this one has ${value.length})`
          : `${JSON.stringify(value)} is not ${s.expected}`,
      });
      return z.NEVER;
    });
}

/**
 * A part of the configuration several services share: the variables it reads and what they become.
 * `check` adds problems that involve more than one variable.
 */
interface Slice<N extends SettingName, T> {
  readonly names: readonly N[];
  build(values: Values<N>, problems: string[]): T;
}
const slice = <const N extends SettingName, T>(
  names: readonly N[],
  build: (values: Values<N>, problems: string[]) => T,
): Slice<N, T> => ({ names, build });

/** How long a graceful stop may take before the process exits anyway. */
export const SHUTDOWN_TIMEOUT_MS = 10_000;

const local = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/** The slices, each read by the services that need it. */
const slices = {
  core: slice(['EGGMESH_HOST', 'EGGMESH_LOG_LEVEL', 'EGGMESH_LOG_REQUESTS'], (v) => ({
    host: v.EGGMESH_HOST,
    logLevel: v.EGGMESH_LOG_LEVEL,
    /** Log a line per request (off by default: it costs throughput). */
    logRequests: v.EGGMESH_LOG_REQUESTS,
    shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
  })),
  http: slice(
    [
      'EGGMESH_CORS_ORIGIN',
      'EGGMESH_BODY_LIMIT_BYTES',
      'EGGMESH_RATE_LIMIT_PER_MIN',
      'EGGMESH_TRUSTED_PROXIES',
      'EGGMESH_HTTP_HEADERS_TIMEOUT_MS',
      'EGGMESH_HTTP_REQUEST_TIMEOUT_MS',
      'EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS',
      'EGGMESH_HTTP_MAX_CONNECTIONS',
    ],
    (v, problems) => {
      if (v.EGGMESH_HTTP_HEADERS_TIMEOUT_MS > v.EGGMESH_HTTP_REQUEST_TIMEOUT_MS)
        problems.push('EGGMESH_HTTP_HEADERS_TIMEOUT_MS must not exceed EGGMESH_HTTP_REQUEST_TIMEOUT_MS');
      return {
        /** Which web pages' origins may call the service from a browser (none by default). */
        corsOrigin: v.EGGMESH_CORS_ORIGIN,
        bodyLimitBytes: v.EGGMESH_BODY_LIMIT_BYTES,
        /** Requests per minute one client address may make to one service; 0 = no limit. */
        rateLimitPerMin: v.EGGMESH_RATE_LIMIT_PER_MIN,
        /** The proxies whose `x-forwarded-for` is believed (Fastify's `trustProxy`); empty: none. */
        trustedProxies: v.EGGMESH_TRUSTED_PROXIES,
        /** What every HTTP server accepts from its clients (serve() applies these). */
        http: Object.freeze({
          /** Time a client has to send the request line and headers. */
          headersTimeoutMs: v.EGGMESH_HTTP_HEADERS_TIMEOUT_MS,
          /** Time a client has to send the whole request; also the longest silence on an open request. */
          requestTimeoutMs: v.EGGMESH_HTTP_REQUEST_TIMEOUT_MS,
          /** How long an idle keep-alive connection stays open between requests. */
          keepAliveTimeoutMs: v.EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS,
          /** Open connections per process; more are closed on accept. */
          maxConnections: v.EGGMESH_HTTP_MAX_CONNECTIONS,
          /**
           * Open connections one client address may hold (trusted proxies excepted; IPv6 per /64): a
           * sixteenth of the process's, so a client holding idle sockets cannot lock the others out.
           */
          maxConnectionsPerClient: Math.max(1, Math.floor(v.EGGMESH_HTTP_MAX_CONNECTIONS / 16)),
        }),
      };
    },
  ),
  auth: slice(
    [
      'EGGMESH_AUTH',
      'EGGMESH_JWT_SECRET',
      'EGGMESH_JWKS',
      'EGGMESH_JWT_ISSUER',
      'EGGMESH_JWT_AUDIENCE',
      'EGGMESH_JWT_CLOCK_SKEW_S',
      'EGGMESH_JWT_MAX_LIFETIME_S',
      'EGGMESH_AUTH_READS',
    ],
    (v, problems) => ({ auth: authConfig(v, problems) }),
  ),
  storage: slice(
    [
      'EGGMESH_STORE',
      'EGGMESH_DATA_DIR',
      'EGGMESH_SQLITE_SYNC',
      'EGGMESH_MONGODB_URI',
      'EGGMESH_MONGODB_DB',
      'EGGMESH_MONGODB_PROJECTIONS_URI',
    ],
    (v) => ({
      store: v.EGGMESH_STORE,
      dataDir: resolve(v.EGGMESH_DATA_DIR),
      sqliteSync: v.EGGMESH_SQLITE_SYNC,
      mongodb: Object.freeze({
        uri: v.EGGMESH_MONGODB_URI,
        dbName: v.EGGMESH_MONGODB_DB,
        projections: projectionsDatabase(
          v.EGGMESH_MONGODB_PROJECTIONS_URI,
          v.EGGMESH_MONGODB_URI,
          v.EGGMESH_MONGODB_DB,
        ),
      }),
    }),
  ),
  eventLog: slice(
    [
      'EGGMESH_LOG',
      'EGGMESH_KAFKA_BROKERS',
      'EGGMESH_KAFKA_TOPIC',
      'EGGMESH_KAFKA_REPLICATION_FACTOR',
      'EGGMESH_KAFKA_MIN_INSYNC_REPLICAS',
    ],
    (v, problems) => {
      if (v.EGGMESH_KAFKA_MIN_INSYNC_REPLICAS > v.EGGMESH_KAFKA_REPLICATION_FACTOR)
        problems.push('EGGMESH_KAFKA_MIN_INSYNC_REPLICAS must not exceed EGGMESH_KAFKA_REPLICATION_FACTOR');
      return {
        /** Where the projector reads the event log: the primary store's own log, or a Kafka topic fed by the relay. */
        log: v.EGGMESH_LOG,
        kafka: Object.freeze({
          brokers: Object.freeze(
            v.EGGMESH_KAFKA_BROKERS.split(',')
              .map((b) => b.trim())
              .filter((b) => b !== ''),
          ),
          topic: v.EGGMESH_KAFKA_TOPIC,
          durability: Object.freeze({
            replicationFactor: v.EGGMESH_KAFKA_REPLICATION_FACTOR,
            minInsyncReplicas: v.EGGMESH_KAFKA_MIN_INSYNC_REPLICAS,
          }),
        }),
      };
    },
  ),
  lists: slice(['EGGMESH_LIST_DEFAULT_LIMIT', 'EGGMESH_LIST_MAX_LIMIT'], (v, problems) => {
    if (v.EGGMESH_LIST_DEFAULT_LIMIT > v.EGGMESH_LIST_MAX_LIMIT)
      problems.push('EGGMESH_LIST_DEFAULT_LIMIT must not exceed EGGMESH_LIST_MAX_LIMIT');
    return {
      list: Object.freeze({ defaultLimit: v.EGGMESH_LIST_DEFAULT_LIMIT, maxLimit: v.EGGMESH_LIST_MAX_LIMIT }),
    };
  }),
  writes: slice(['EGGMESH_BULK_MAX_ITEMS', 'EGGMESH_MAX_FUTURE_MS', 'EGGMESH_ID_VERSION'], (v) => ({
    bulkMaxItems: v.EGGMESH_BULK_MAX_ITEMS,
    /** Event timestamps later than the server time + this are refused (ms). */
    maxFutureMs: v.EGGMESH_MAX_FUTURE_MS,
    /** The UUID version assigned to a create without an id: 7 (time-ordered) or 4 (random). */
    idVersion: (v.EGGMESH_ID_VERSION === '4' ? 4 : 7) as 4 | 7,
  })),
  graphql: slice(
    [
      'EGGMESH_GRAPHQL_MAX_DEPTH',
      'EGGMESH_GRAPHQL_MAX_COST',
      'EGGMESH_GRAPHQL_MAX_DOCUMENT_BYTES',
      'EGGMESH_MIN_POSITION_WAIT_MS',
    ],
    (v) => ({
      minPositionWaitMs: v.EGGMESH_MIN_POSITION_WAIT_MS,
      graphql: Object.freeze({
        maxDepth: v.EGGMESH_GRAPHQL_MAX_DEPTH,
        /** Largest estimated number of rows a query may read, computed before it runs. */
        maxCost: v.EGGMESH_GRAPHQL_MAX_COST,
        /** Longest query document accepted, in UTF-8 bytes. */
        maxDocumentBytes: v.EGGMESH_GRAPHQL_MAX_DOCUMENT_BYTES,
        /** Most fields an operation may select once its fragments are expanded (aliases count each). */
        maxFields: 2000,
        /** Most lexical tokens in a query document. */
        maxTokens: 5000,
        /** Most rows one response may carry (every root and relation row counts). */
        maxRows: 100_000,
        /** Most bytes (estimated from the rows read) one response may carry. */
        maxResponseBytes: 32 * 1024 * 1024,
      }),
    }),
  ),
  /** The live projections (GraphQL subscriptions) of the read-api: constants, docs/api.md lists them. */
  subscriptions: slice([], () => ({
    subscriptions: Object.freeze({
      /** Most subscriptions one WebSocket connection may hold. */
      perConnection: 20,
      /** Most subscriptions one client address may hold over its connections, per read-api process. */
      perClient: 1000,
      /** A subscriber whose socket and queue hold more unsent bytes than this is dropped. */
      bufferBytes: 1_048_576,
      /** Longest wait between two looks at the projection position when no change woke the feed. */
      pollMs: 250,
      /** Most log positions one look at the change feed covers. */
      maxSpan: 5000,
      /** How often an open subscription connection is pinged (keeps proxies and NATs from closing it). */
      keepAliveMs: 15_000,
    }),
  })),
  /** The projector's loop: constants (`pnpm rebuild-projections --batch` sets a rebuild's own batch). */
  projector: slice([], () => ({
    projector: Object.freeze({ batchSize: 2000, idlePollMs: 5000 }),
  })),
  ports: slice(['WRITE_API_PORT', 'READ_API_PORT', 'PROJECTOR_PORT', 'RELAY_PORT'], (v) => ({
    ports: Object.freeze({
      write: v.WRITE_API_PORT,
      read: v.READ_API_PORT,
      projector: v.PROJECTOR_PORT,
      relay: v.RELAY_PORT,
    }),
  })),
  upstreams: slice(['EGGMESH_HOST', 'WRITE_API_PORT', 'EGGMESH_WRITE_API_URL'], (v) => ({
    /** Where REST writes go from the read-api's public port (and `pnpm seed`). */
    upstreams: Object.freeze({ write: v.EGGMESH_WRITE_API_URL ?? local(v.EGGMESH_HOST, v.WRITE_API_PORT) }),
  })),
  localServers: slice(
    [
      'EGGMESH_DEV_MONGODB_PORT',
      'EGGMESH_DEV_KAFKA_PORT',
      'EGGMESH_DEV_POSTGRES_PORT',
      'EGGMESH_DEV_CONNECT_PORT',
    ],
    (v) => ({
      /**
       * Ports of the servers `pnpm start:scaled` (MongoDB-wire, Kafka) and `pnpm start:legacy`
       * (PostgreSQL, Kafka Connect) start locally.
       */
      dev: Object.freeze({
        mongodbPort: v.EGGMESH_DEV_MONGODB_PORT,
        kafkaPort: v.EGGMESH_DEV_KAFKA_PORT,
        postgresPort: v.EGGMESH_DEV_POSTGRES_PORT,
        connectPort: v.EGGMESH_DEV_CONNECT_PORT,
      }),
    }),
  ),
  legacy: slice(
    [
      'LEGACY_SYNC_PORT',
      'EGGMESH_LEGACY_SOURCE',
      'EGGMESH_LEGACY_TOPIC_PREFIX',
      'EGGMESH_LEGACY_CONNECT_URL',
      'EGGMESH_LEGACY_DB_URL',
    ],
    (v) => ({
      /**
       * The anti-corruption layer (services/legacy-sync): which source it maps and where it reads. Its
       * consumer group and dead-letter topic are named after the prefix and the source; a child waits
       * an hour for its parent before it dead-letters as "missing parent".
       */
      legacy: Object.freeze({
        port: v.LEGACY_SYNC_PORT,
        source: v.EGGMESH_LEGACY_SOURCE,
        topicPrefix: v.EGGMESH_LEGACY_TOPIC_PREFIX,
        deadLetterTopic: `${v.EGGMESH_LEGACY_TOPIC_PREFIX}.${v.EGGMESH_LEGACY_SOURCE}.dead-letter`,
        group: `eggmesh-legacy-sync.${v.EGGMESH_LEGACY_TOPIC_PREFIX}.${v.EGGMESH_LEGACY_SOURCE}`,
        parkTtlMs: 3_600_000,
        /**
         * Where the layer registers its source's Debezium connector (Kafka Connect's REST API), and the
         * legacy database that connector reads; without both, someone else registers it.
         */
        connectUrl: v.EGGMESH_LEGACY_CONNECT_URL,
        databaseUrl: v.EGGMESH_LEGACY_DB_URL,
      }),
    }),
  ),
};
type Slices = typeof slices;
type SliceName = keyof Slices;
type Built<S> = S extends Slice<SettingName, infer T> ? T : never;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
  ? I
  : never;

/** Which slices each eggmesh command reads: it validates those variables and no others. */
export const serviceSlices = Object.freeze({
  'write-api': ['core', 'ports', 'http', 'auth', 'storage', 'lists', 'writes'],
  'read-api': [
    'core',
    'ports',
    'http',
    'auth',
    'storage',
    'lists',
    'writes',
    'graphql',
    'upstreams',
    'subscriptions',
  ],
  projector: ['core', 'ports', 'http', 'storage', 'eventLog', 'projector'],
  relay: ['core', 'ports', 'http', 'storage', 'eventLog'],
  rebuild: ['core', 'storage'],
  seed: ['core', 'upstreams'],
  'legacy-sync': ['core', 'http', 'storage', 'eventLog', 'upstreams', 'legacy'],
  stack: Object.keys(slices) as SliceName[],
} as const satisfies Record<string, readonly SliceName[]>);
export type ServiceName = keyof typeof serviceSlices;

/** What a command's configuration holds: the slices it reads, merged. */
export type ConfigOf<K extends ServiceName> = Readonly<
  UnionToIntersection<Built<Slices[(typeof serviceSlices)[K][number]]>>
>;
/** The whole configuration (every slice): what `pnpm start` reads, and what tests build services from. */
export type Config = ConfigOf<'stack'>;
export type CoreConfig = Readonly<Built<Slices['core']>>;
export type HttpConfig = Readonly<Built<Slices['http']>>;
/** What the REST contract reads (the write-api serves it whole, the read-api its reads). */
export type RestConfig = Pick<
  Config,
  'auth' | 'bodyLimitBytes' | 'bulkMaxItems' | 'idVersion' | 'list' | 'maxFutureMs' | 'rateLimitPerMin'
>;

/** The variables a command reads, in the table's order. */
export function settingNames(service: ServiceName): SettingName[] {
  const names = new Set<SettingName>(
    serviceSlices[service].flatMap((s): readonly SettingName[] => slices[s].names),
  );
  return (Object.keys(settings) as SettingName[]).filter((name) => names.has(name));
}

/** One zod object per command: its slices' variables, read and combined into its frozen config. */
function configSchema<K extends ServiceName>(service: K) {
  const names = settingNames(service);
  return z
    .object(Object.fromEntries(names.map((name) => [name, variable(name)])))
    .transform((values, ctx) => {
      const problems: string[] = [];
      const parts = serviceSlices[service].map((s) => slices[s].build(values as never, problems));
      for (const message of problems) ctx.addIssue({ code: 'custom', message, path: [] });
      return Object.freeze(Object.assign({}, ...parts)) as ConfigOf<K>;
    });
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * How an eggmesh process that will not start exits, so its supervisor can tell a problem a restart
 * cannot fix from a crash: 2 for invalid configuration, 98 (EADDRINUSE on Linux) for a port another
 * process holds.
 */
export const exitCodes = Object.freeze({ config: 2, portInUse: 98 });

/**
 * Reads a command's configuration from `env`, or throws a ConfigError listing every problem: each
 * invalid variable by name (in table order), then the checks across variables.
 */
export function parseConfig<K extends ServiceName = 'stack'>(
  env: Record<string, string | undefined>,
  service: K = 'stack' as K,
): ConfigOf<K> {
  const parsed = configSchema(service).safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) =>
    issue.path.length > 0 ? `${String(issue.path[0])}: ${issue.message}` : issue.message,
  );
  throw new ConfigError(`invalid configuration:\n${lines.map((line) => `  ${line}`).join('\n')}`);
}

/**
 * A process reading its own environment at boot: warns on stderr about each EGGMESH_* variable no
 * process reads (a likely typo), then reads the variables of `service`; invalid ones print every
 * problem to stderr and exit with `exitCodes.config`, not a stack trace.
 */
export function loadConfig<K extends ServiceName>(service: K): ConfigOf<K> {
  for (const line of unknownEnvWarnings(process.env)) process.stderr.write(`${line}\n`);
  try {
    return parseConfig(process.env, service);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(exitCodes.config);
  }
}

/** A JSON Web Key Set, as read from `EGGMESH_JWKS` when it names a file. */
export interface JsonWebKeySet {
  readonly keys: readonly Record<string, unknown>[];
}

export interface AuthConfig {
  /** `none`: every request may write (the zero-config default); `jwt`: writes need a bearer token. */
  readonly mode: 'none' | 'jwt';
  /** Reads need the `eggmesh:read` scope too (only with `mode: 'jwt'`). */
  readonly reads: boolean;
  /** HS256 shared secret. Not enumerable: printing or serializing the config never shows it. */
  readonly secret?: string;
  /** Public keys (RS256/ES256) read from a JWKS file at boot. */
  readonly jwks?: JsonWebKeySet;
  /** A JWKS served over https, fetched (and cached) by the verifier. */
  readonly jwksUrl?: string;
  readonly issuer?: string;
  readonly audience?: string;
  /** Leeway on `exp`, `nbf` and `iat`, in seconds. */
  readonly clockSkewS: number;
  /** Longest a token may be valid for, in seconds: from `iat` to `exp`, and from now to `exp`. */
  readonly maxLifetimeS: number;
}

/** The auth settings, checked together: `jwt` needs exactly one key source, and a JWKS file must read. */
type AuthSetting =
  | 'EGGMESH_AUTH'
  | 'EGGMESH_JWT_SECRET'
  | 'EGGMESH_JWKS'
  | 'EGGMESH_JWT_ISSUER'
  | 'EGGMESH_JWT_AUDIENCE'
  | 'EGGMESH_JWT_CLOCK_SKEW_S'
  | 'EGGMESH_JWT_MAX_LIFETIME_S'
  | 'EGGMESH_AUTH_READS';
function authConfig(c: Values<AuthSetting>, problems: string[]): AuthConfig {
  const base = {
    mode: c.EGGMESH_AUTH,
    reads: c.EGGMESH_AUTH === 'jwt' && c.EGGMESH_AUTH_READS,
    clockSkewS: c.EGGMESH_JWT_CLOCK_SKEW_S,
    maxLifetimeS: c.EGGMESH_JWT_MAX_LIFETIME_S,
    ...(c.EGGMESH_JWT_ISSUER === undefined ? {} : { issuer: c.EGGMESH_JWT_ISSUER }),
    ...(c.EGGMESH_JWT_AUDIENCE === undefined ? {} : { audience: c.EGGMESH_JWT_AUDIENCE }),
  };
  if (c.EGGMESH_AUTH === 'none') {
    if (c.EGGMESH_AUTH_READS) problems.push('EGGMESH_AUTH_READS=true needs EGGMESH_AUTH=jwt');
    return Object.freeze(base);
  }
  const secret = c.EGGMESH_JWT_SECRET;
  const source = c.EGGMESH_JWKS;
  if ((secret === undefined) === (source === undefined)) {
    problems.push(
      'EGGMESH_AUTH=jwt needs exactly one of EGGMESH_JWT_SECRET (HS256) or EGGMESH_JWKS (RS256/ES256)',
    );
    return Object.freeze(base);
  }
  if (secret !== undefined) {
    const auth = { ...base };
    Object.defineProperty(auth, 'secret', { value: secret, enumerable: false });
    return Object.freeze(auth);
  }
  if (source === undefined) return Object.freeze(base);
  if (/^https?:/i.test(source)) {
    if (!/^https:\/\//i.test(source)) problems.push('EGGMESH_JWKS: a JWKS URL must be https');
    return Object.freeze({ ...base, jwksUrl: source });
  }
  try {
    const parsed: unknown = JSON.parse(readFileSync(resolve(source), 'utf8'));
    const keys = (parsed as { keys?: unknown } | null)?.keys;
    if (
      !Array.isArray(keys) ||
      keys.length === 0 ||
      !keys.every((k) => typeof k === 'object' && k !== null)
    ) {
      problems.push(`EGGMESH_JWKS: ${source} is not a JWKS (a JSON object with a non-empty "keys" array)`);
      return Object.freeze(base);
    }
    return Object.freeze({ ...base, jwks: Object.freeze({ keys: keys as Record<string, unknown>[] }) });
  } catch (error) {
    problems.push(`EGGMESH_JWKS: cannot read ${source} as JSON (${(error as Error).message})`);
    return Object.freeze(base);
  }
}
