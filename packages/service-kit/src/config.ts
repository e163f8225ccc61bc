import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { unknownEnvWarnings } from './env-check.js';

/** A whole number from the environment: plain decimal digits only, within `min`..`max`. */
interface IntSetting {
  readonly kind: 'int';
  readonly default: number;
  readonly min: number;
  readonly max?: number;
}
/** One of a few words. */
interface OneOfSetting<V extends string = string> {
  readonly kind: 'oneOf';
  readonly values: readonly V[];
  readonly default: V;
}
/** A non-empty string, optionally matching `pattern` (`expected` says what it must be); no default: optional. */
interface TextSetting {
  readonly kind: 'text';
  readonly default?: string;
  readonly pattern?: RegExp;
  readonly expected?: string;
}
/** An optional secret of at least `minLength` characters; error messages never show its value. */
interface SecretSetting {
  readonly kind: 'secret';
  readonly default?: undefined;
  readonly minLength: number;
  readonly expected: string;
}
/** An optional URL (anything `URL.canParse` accepts once trimmed). */
interface UrlSetting {
  readonly kind: 'url';
  readonly default?: undefined;
}
/** How one setting is read: its kind, its default (none: the setting is optional) and its constraints. */
export type Setting = IntSetting | OneOfSetting | TextSetting | SecretSetting | UrlSetting;

const int = (fallback: number, min: number, max?: number): IntSetting =>
  Object.freeze({ kind: 'int', default: fallback, min, ...(max === undefined ? {} : { max }) });
const port = (fallback: number) => int(fallback, 0, 65_535);
const positive = (fallback: number) => int(fallback, 1);
const oneOf = <const V extends string>(values: readonly V[], fallback: NoInfer<V>): OneOfSetting<V> =>
  Object.freeze({ kind: 'oneOf', values: Object.freeze([...values]), default: fallback });
const flag = (fallback: 'true' | 'false') => oneOf(['true', 'false', '1', '0'], fallback);
const text = (fallback: string): TextSetting & { readonly default: string } =>
  Object.freeze({ kind: 'text', default: fallback });
const optionalText = (): TextSetting => Object.freeze({ kind: 'text' });
const matching = (
  fallback: string,
  pattern: RegExp,
  expected: string,
): TextSetting & { readonly default: string } =>
  Object.freeze({ kind: 'text', default: fallback, pattern, expected });
const secret = (minLength: number, expected: string): SecretSetting =>
  Object.freeze({ kind: 'secret', minLength, expected });
const url = (): UrlSetting => Object.freeze({ kind: 'url' });
const isOn = (value: string) => value === 'true' || value === '1';

/**
 * Every setting of every eggmesh process, read from the environment once at boot: one entry per variable,
 * with its kind, default and constraints. Parsing, the defaults `--help` prints and the names the
 * environment check knows all come from this table. docs/configuration.md documents each one; keep the
 * two in step.
 */
export const configSchema = Object.freeze({
  EGGMESH_DATA_DIR: text('./data'),
  EGGMESH_HOST: text('127.0.0.1'),
  WRITE_API_PORT: port(3034),
  READ_API_PORT: port(5088),
  PROJECTOR_PORT: port(3036),
  RELAY_PORT: port(3037),
  EGGMESH_LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  EGGMESH_LOG_REQUESTS: flag('false'),
  EGGMESH_CORS_ORIGIN: text('*'),
  EGGMESH_BODY_LIMIT_BYTES: positive(1_048_576),
  EGGMESH_SQLITE_SYNC: oneOf(['normal', 'full'], 'normal'),
  EGGMESH_LIST_DEFAULT_LIMIT: positive(1000),
  EGGMESH_LIST_MAX_LIMIT: positive(10_000),
  EGGMESH_BULK_MAX_ITEMS: positive(1000),
  EGGMESH_MAX_FUTURE_MS: int(86_400_000, 0),
  EGGMESH_ID_VERSION: oneOf(['7', '4'], '7'),
  EGGMESH_MIN_POSITION_WAIT_MS: int(5000, 0),
  EGGMESH_READ_MEMO_ROWS: int(20_000, 0),
  EGGMESH_GRAPHQL_MAX_DEPTH: positive(8),
  EGGMESH_GRAPHQL_MAX_COST: positive(2_000_000),
  EGGMESH_GRAPHQL_MAX_FIELDS: positive(2000),
  EGGMESH_GRAPHQL_MAX_DOCUMENT_BYTES: positive(32_768),
  EGGMESH_GRAPHQL_MAX_TOKENS: positive(5000),
  EGGMESH_GRAPHQL_MAX_ROWS: positive(100_000),
  EGGMESH_GRAPHQL_MAX_RESPONSE_BYTES: positive(33_554_432),
  EGGMESH_PROJECTOR_BATCH: positive(2000),
  EGGMESH_PROJECTOR_IDLE_POLL_MS: positive(5000),
  EGGMESH_SHUTDOWN_TIMEOUT_MS: positive(10_000),
  EGGMESH_HTTP_HEADERS_TIMEOUT_MS: positive(10_000),
  EGGMESH_HTTP_REQUEST_TIMEOUT_MS: positive(30_000),
  EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS: positive(10_000),
  EGGMESH_HTTP_MAX_CONNECTIONS: positive(4096),
  EGGMESH_HTTP_TURN_MS: int(2, 0, 1000),
  EGGMESH_EVENT_LOOP_STALL_MS: int(10_000, 0),
  EGGMESH_STORE: oneOf(['sqlite', 'mongodb'], 'sqlite'),
  EGGMESH_MONGODB_URI: text('mongodb://127.0.0.1:27017'),
  EGGMESH_MONGODB_DB: text('eggmesh'),
  EGGMESH_MONGODB_WRITE_CONCERN: matching(
    'majority',
    /^(majority|[0-9]+)$/,
    'majority or a number of members',
  ),
  EGGMESH_DEV_MONGODB_PORT: port(27017),
  EGGMESH_LOG: oneOf(['store', 'kafka'], 'store'),
  EGGMESH_KAFKA_BROKERS: text('127.0.0.1:9092'),
  EGGMESH_KAFKA_TOPIC: text('eggmesh.events'),
  EGGMESH_DEV_KAFKA_PORT: port(9092),
  EGGMESH_AUTH: oneOf(['none', 'jwt'], 'none'),
  EGGMESH_JWT_SECRET: secret(32, 'an HS256 secret needs at least 32 characters'),
  EGGMESH_JWKS: optionalText(),
  EGGMESH_JWT_ISSUER: optionalText(),
  EGGMESH_JWT_AUDIENCE: optionalText(),
  EGGMESH_JWT_CLOCK_SKEW_S: int(30, 0, 300),
  EGGMESH_AUTH_READS: flag('false'),
  EGGMESH_RATE_LIMIT_PER_MIN: int(0, 0),
  EGGMESH_WRITE_API_URL: url(),
} satisfies Readonly<Record<string, Setting>>);

type SettingValue<S> = S extends IntSetting ? number : S extends OneOfSetting<infer V> ? V : string;
/** Each setting as read: its value type, `undefined` included when it has no default. */
type RawConfig = {
  readonly [K in keyof typeof configSchema]: (typeof configSchema)[K] extends {
    readonly default: string | number;
  }
    ? SettingValue<(typeof configSchema)[K]>
    : SettingValue<(typeof configSchema)[K]> | undefined;
};

export interface Config {
  readonly dataDir: string;
  readonly host: string;
  readonly ports: {
    readonly write: number;
    /** The read-api's: the public port. */
    readonly read: number;
    readonly projector: number;
    readonly relay: number;
  };
  readonly logLevel: RawConfig['EGGMESH_LOG_LEVEL'];
  /** Log a line per request (off by default: it costs throughput). */
  readonly logRequests: boolean;
  readonly corsOrigin: string;
  readonly bodyLimitBytes: number;
  readonly sqliteSync: RawConfig['EGGMESH_SQLITE_SYNC'];
  readonly list: { readonly defaultLimit: number; readonly maxLimit: number };
  readonly bulkMaxItems: number;
  /** Event timestamps later than the server time + this are refused (ms). */
  readonly maxFutureMs: number;
  /** The UUID version the write-api assigns to a create without an id: 7 (time-ordered) or 4 (random). */
  readonly idVersion: 4 | 7;
  readonly minPositionWaitMs: number;
  /** Rows of current-read answers a read-only SQLite store keeps while unchanged (0: none). */
  readonly readMemoRows: number;
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
  /** What every HTTP server accepts from its clients (serve() applies these). */
  readonly http: {
    /** Time a client has to send the request line and headers. */
    readonly headersTimeoutMs: number;
    /** Time a client has to send the whole request (headers and body); also the longest silence on a socket. */
    readonly requestTimeoutMs: number;
    /** How long an idle keep-alive connection stays open between requests. */
    readonly keepAliveTimeoutMs: number;
    /** Open connections per process; more are closed on accept. */
    readonly maxConnections: number;
    /** How long one turn of the event loop may spend starting requests (LoopTurns); 0: no bound. */
    readonly turnMs: number;
  };
  /** A main thread that does not tick for this long is killed by its watchdog thread; 0 turns it off. */
  readonly eventLoopStallMs: number;
  /** Which primary store backs the services (only `sqlite` is wired into them yet). */
  readonly store: RawConfig['EGGMESH_STORE'];
  readonly mongodb: {
    readonly uri: string;
    readonly dbName: string;
    readonly writeConcern: 'majority' | number;
    /** Port of the MongoDB-wire dev server the scaled stack starts locally. */
    readonly devPort: number;
  };
  /** Where the projector reads the event log: the primary store's own log, or a Kafka topic fed by the relay. */
  readonly log: RawConfig['EGGMESH_LOG'];
  readonly kafka: {
    /** Bootstrap brokers, `host:port` separated by commas. */
    readonly brokers: readonly string[];
    readonly topic: string;
    /** Port of the local single-node Kafka the scaled dev stack starts. */
    readonly devPort: number;
  };
  /** Who may write (and, with `reads`, read): bearer JWTs, verified in service-kit's auth.ts. */
  readonly auth: AuthConfig;
  /** Requests per minute one client address may make to one service; 0 = no limit. */
  readonly rateLimitPerMin: number;
  /** Where the read-api forwards the write routes; defaults to the local write-api. */
  readonly upstreams: { readonly write: string };
}

/** A JSON Web Key Set, as read from `EGGMESH_JWKS` when it names a file. */
export interface JsonWebKeySet {
  readonly keys: readonly Record<string, unknown>[];
}

export interface AuthConfig {
  /** `none`: every request may write (the zero-config default); `jwt`: writes need a bearer token. */
  readonly mode: RawConfig['EGGMESH_AUTH'];
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
  /** Leeway on `exp` and `nbf`, in seconds. */
  readonly clockSkewS: number;
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
 * Parses the environment into a frozen config. Called without an argument (a process reading its own
 * environment at boot), it first warns on stderr about each EGGMESH_* variable no process reads (a likely
 * typo), then invalid settings print every problem to stderr and exit with `exitCodes.config`, not a
 * stack trace; given an environment, it throws a ConfigError listing them.
 */
export function loadConfig(env?: Record<string, string | undefined>): Config {
  if (env !== undefined) return parseConfig(env);
  // A typo (EGGMESH_DATADIR) would otherwise be ignored without a word.
  for (const line of unknownEnvWarnings(process.env)) process.stderr.write(`${line}\n`);
  try {
    return parseConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(exitCodes.config);
  }
}

function parseConfig(env: Record<string, string | undefined>): Config {
  const c = readSettings(env);
  const problems: string[] = [];
  if (c.EGGMESH_LIST_DEFAULT_LIMIT > c.EGGMESH_LIST_MAX_LIMIT) {
    problems.push('EGGMESH_LIST_DEFAULT_LIMIT must not exceed EGGMESH_LIST_MAX_LIMIT');
  }
  if (c.EGGMESH_HTTP_HEADERS_TIMEOUT_MS > c.EGGMESH_HTTP_REQUEST_TIMEOUT_MS) {
    problems.push('EGGMESH_HTTP_HEADERS_TIMEOUT_MS must not exceed EGGMESH_HTTP_REQUEST_TIMEOUT_MS');
  }
  const auth = authConfig(c, problems);
  if (problems.length > 0) {
    throw new ConfigError(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
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
      relay: c.RELAY_PORT,
    }),
    logLevel: c.EGGMESH_LOG_LEVEL,
    logRequests: isOn(c.EGGMESH_LOG_REQUESTS),
    corsOrigin: c.EGGMESH_CORS_ORIGIN,
    bodyLimitBytes: c.EGGMESH_BODY_LIMIT_BYTES,
    sqliteSync: c.EGGMESH_SQLITE_SYNC,
    list: Object.freeze({ defaultLimit: c.EGGMESH_LIST_DEFAULT_LIMIT, maxLimit: c.EGGMESH_LIST_MAX_LIMIT }),
    bulkMaxItems: c.EGGMESH_BULK_MAX_ITEMS,
    maxFutureMs: c.EGGMESH_MAX_FUTURE_MS,
    idVersion: c.EGGMESH_ID_VERSION === '4' ? 4 : 7,
    minPositionWaitMs: c.EGGMESH_MIN_POSITION_WAIT_MS,
    readMemoRows: c.EGGMESH_READ_MEMO_ROWS,
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
    http: Object.freeze({
      headersTimeoutMs: c.EGGMESH_HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: c.EGGMESH_HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: c.EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: c.EGGMESH_HTTP_MAX_CONNECTIONS,
      turnMs: c.EGGMESH_HTTP_TURN_MS,
    }),
    eventLoopStallMs: c.EGGMESH_EVENT_LOOP_STALL_MS,
    store: c.EGGMESH_STORE,
    mongodb: Object.freeze({
      uri: c.EGGMESH_MONGODB_URI,
      dbName: c.EGGMESH_MONGODB_DB,
      writeConcern:
        c.EGGMESH_MONGODB_WRITE_CONCERN === 'majority' ? 'majority' : Number(c.EGGMESH_MONGODB_WRITE_CONCERN),
      devPort: c.EGGMESH_DEV_MONGODB_PORT,
    }),
    log: c.EGGMESH_LOG,
    kafka: Object.freeze({
      brokers: Object.freeze(
        c.EGGMESH_KAFKA_BROKERS.split(',')
          .map((b) => b.trim())
          .filter((b) => b !== ''),
      ),
      topic: c.EGGMESH_KAFKA_TOPIC,
      devPort: c.EGGMESH_DEV_KAFKA_PORT,
    }),
    auth,
    rateLimitPerMin: c.EGGMESH_RATE_LIMIT_PER_MIN,
    upstreams: Object.freeze({ write: c.EGGMESH_WRITE_API_URL ?? local(c.WRITE_API_PORT) }),
  });
}

/** Every setting of `configSchema` read from `env`, or a ConfigError listing each one that is invalid. */
function readSettings(env: Record<string, string | undefined>): RawConfig {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, setting] of Object.entries(configSchema) as [string, Setting][]) {
    const raw = env[name];
    if (raw === undefined) {
      values[name] = setting.default;
      continue;
    }
    const read = readSetting(setting, raw);
    if ('problem' in read) problems.push(`${name}: ${read.problem}`);
    else values[name] = read.value;
  }
  if (problems.length > 0) {
    throw new ConfigError(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
  return values as RawConfig;
}

/** What one set variable means for its setting, or what is wrong with it (quoting it, unless secret). */
function readSetting(setting: Setting, raw: string): { value: string | number } | { problem: string } {
  const expected = expectation(setting);
  if (raw === '') {
    const fallback = setting.default === undefined ? '' : ` for the default ${setting.default}`;
    return { problem: `"" is empty; expected ${expected}, or leave it unset${fallback}` };
  }
  const refused = { problem: `${JSON.stringify(raw)} is not ${expected}` };
  switch (setting.kind) {
    case 'int': {
      // Plain digits only: Number() would also take ' 8 ', '1e3', '0x10' or '1.0'.
      const value = Number(raw);
      const ok =
        /^[0-9]+$/.test(raw) &&
        Number.isSafeInteger(value) &&
        value >= setting.min &&
        (setting.max === undefined || value <= setting.max);
      return ok ? { value } : refused;
    }
    case 'oneOf':
      return setting.values.includes(raw) ? { value: raw } : refused;
    case 'text':
      return setting.pattern === undefined || setting.pattern.test(raw) ? { value: raw } : refused;
    case 'secret':
      return raw.length >= setting.minLength
        ? { value: raw }
        : { problem: `${setting.expected} (this one has ${raw.length})` };
    case 'url': {
      // As zod's url() did: surrounding blanks trimmed, tabs and line breaks (which URL drops) removed.
      const trimmed = raw.trim();
      return URL.canParse(trimmed) ? { value: trimmed.replace(/[\t\n\r]/g, '') } : refused;
    }
  }
}

/** What a setting's value must be, for error messages. */
function expectation(setting: Setting): string {
  switch (setting.kind) {
    case 'int':
      return setting.max === undefined
        ? `a whole number, ${setting.min} or more`
        : `a whole number from ${setting.min} to ${setting.max}`;
    case 'oneOf':
      return `one of ${setting.values.join(', ')}`;
    case 'text':
      return setting.expected ?? 'a value';
    case 'secret':
      return `at least ${setting.minLength} characters`;
    case 'url':
      return 'a URL such as http://127.0.0.1:3034';
  }
}

/** The auth settings, checked together: `jwt` needs exactly one key source, and a JWKS file must read. */
function authConfig(c: RawConfig, problems: string[]): AuthConfig {
  const base = {
    mode: c.EGGMESH_AUTH,
    reads: c.EGGMESH_AUTH === 'jwt' && isOn(c.EGGMESH_AUTH_READS),
    clockSkewS: c.EGGMESH_JWT_CLOCK_SKEW_S,
    ...(c.EGGMESH_JWT_ISSUER === undefined ? {} : { issuer: c.EGGMESH_JWT_ISSUER }),
    ...(c.EGGMESH_JWT_AUDIENCE === undefined ? {} : { audience: c.EGGMESH_JWT_AUDIENCE }),
  };
  if (c.EGGMESH_AUTH === 'none') {
    if (isOn(c.EGGMESH_AUTH_READS)) problems.push('EGGMESH_AUTH_READS=true needs EGGMESH_AUTH=jwt');
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
