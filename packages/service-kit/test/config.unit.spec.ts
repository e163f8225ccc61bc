import { readFileSync } from 'node:fs';
import { ConfigError, configSchema, loadConfig } from '@eggmesh/service-kit';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
const documented = new Map(
  [...doc.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim().replace(/`/g, '')]),
);

describe('configuration', () => {
  it('documents every setting, and only real ones', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(configSchema).sort());
  });

  it('documents the defaults the code uses', () => {
    for (const [name, setting] of Object.entries(configSchema)) {
      if (setting.default === undefined) continue;
      expect(documented.get(name), name).toBe(String(setting.default));
    }
  });

  it('accepts each default when it is set explicitly, and gives the same config', () => {
    const explicit = Object.fromEntries(
      Object.entries(configSchema)
        .filter(([, setting]) => setting.default !== undefined)
        .map(([name, setting]) => [name, String(setting.default)]),
    );
    expect(Object.keys(explicit).length).toBeGreaterThanOrEqual(30);
    expect(loadConfig(explicit)).toEqual(loadConfig({}));
  });

  it('gives the documented ports and a frozen object', () => {
    const config = loadConfig({});
    expect(config.ports).toEqual({
      write: 3034,
      read: 5088,
      projector: 3036,
      relay: 3037,
    });
    expect(config.host).toBe('127.0.0.1');
    expect(Object.isFrozen(config)).toBe(true);
    expect(config.upstreams.write).toBe('http://127.0.0.1:3034');
  });

  it('reads overrides and refuses bad values with every problem listed', () => {
    expect(loadConfig({ WRITE_API_PORT: '4000', EGGMESH_LOG_REQUESTS: 'true' })).toMatchObject({
      ports: { write: 4000 },
      logRequests: true,
    });
    const error = (() => {
      try {
        loadConfig({ WRITE_API_PORT: 'abc', EGGMESH_SQLITE_SYNC: 'sometimes' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toMatch(/WRITE_API_PORT/);
    expect(String(error)).toMatch(/EGGMESH_SQLITE_SYNC/);
    expect(() => loadConfig({ EGGMESH_LIST_DEFAULT_LIMIT: '50', EGGMESH_LIST_MAX_LIMIT: '10' })).toThrow(
      /must not exceed/,
    );
  });

  it('reads the HTTP limits and refuses a headers timeout above the request timeout', () => {
    expect(loadConfig({}).http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 10_000,
      maxConnections: 4096,
      turnMs: 2,
    });
    expect(loadConfig({ EGGMESH_HTTP_TURN_MS: '0' }).http.turnMs).toBe(0);
    expect(loadConfig({ EGGMESH_EVENT_LOOP_STALL_MS: '0' }).eventLoopStallMs).toBe(0);
    const error = (() => {
      try {
        loadConfig({
          EGGMESH_HTTP_HEADERS_TIMEOUT_MS: '5000',
          EGGMESH_HTTP_REQUEST_TIMEOUT_MS: '1000',
        });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toMatch(/EGGMESH_HTTP_HEADERS_TIMEOUT_MS must not exceed/);
  });

  it('parses the MongoDB settings: store choice, URI, database, write concern, dev port', () => {
    expect(loadConfig({})).toMatchObject({
      store: 'sqlite',
      mongodb: {
        uri: 'mongodb://127.0.0.1:27017',
        dbName: 'eggmesh',
        writeConcern: 'majority',
        devPort: 27017,
      },
    });
    expect(
      loadConfig({
        EGGMESH_STORE: 'mongodb',
        EGGMESH_MONGODB_URI: 'mongodb://a,b,c/?replicaSet=rs0',
        EGGMESH_MONGODB_DB: 'farm',
        EGGMESH_MONGODB_WRITE_CONCERN: '2',
        EGGMESH_DEV_MONGODB_PORT: '0',
      }),
    ).toMatchObject({
      store: 'mongodb',
      mongodb: { uri: 'mongodb://a,b,c/?replicaSet=rs0', dbName: 'farm', writeConcern: 2, devPort: 0 },
    });
    expect(() => loadConfig({ EGGMESH_STORE: 'postgres' })).toThrow(/EGGMESH_STORE/);
    expect(() => loadConfig({ EGGMESH_MONGODB_WRITE_CONCERN: 'all' })).toThrow(
      /EGGMESH_MONGODB_WRITE_CONCERN/,
    );
  });
});

/** The lines of the ConfigError `env` gets (after `invalid configuration:`), or [] when it is valid. */
function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const [first, ...lines] = error.message.split('\n');
    expect(first).toBe('invalid configuration:');
    return lines.map((line) => line.trim());
  }
}

describe('reading each kind of setting', () => {
  it('ports: the default when unset, 0 to 65535 in plain digits, anything else refused by name and value', () => {
    expect(loadConfig({}).ports.write).toBe(3034);
    expect(loadConfig({ WRITE_API_PORT: undefined }).ports.write).toBe(3034);
    expect(loadConfig({ WRITE_API_PORT: '0' }).ports.write).toBe(0);
    expect(loadConfig({ WRITE_API_PORT: '65535' }).ports.write).toBe(65_535);
    expect(loadConfig({ READ_API_PORT: '0080' }).ports.read).toBe(80);
    expect(loadConfig({}).ports.read).toBe(5088);
    for (const bad of ['65536', '-1', '1.5', '1.0', 'abc', '1e3', '0x50', '+80', ' 80', '80 ', 'Infinity']) {
      expect(problemsOf({ WRITE_API_PORT: bad }), bad).toEqual([
        `WRITE_API_PORT: ${JSON.stringify(bad)} is not a whole number from 0 to 65535`,
      ]);
    }
  });

  it('numbers: an empty string is refused, not read as 0', () => {
    expect(problemsOf({ WRITE_API_PORT: '' })).toEqual([
      'WRITE_API_PORT: "" is empty; expected a whole number from 0 to 65535, or leave it unset for the default 3034',
    ]);
    expect(problemsOf({ EGGMESH_RATE_LIMIT_PER_MIN: '' })).toEqual([
      'EGGMESH_RATE_LIMIT_PER_MIN: "" is empty; expected a whole number, 0 or more, or leave it unset for the default 0',
    ]);
  });

  it('counts: at least 1 (or 0), an upper bound where there is one, safe integers only', () => {
    expect(loadConfig({ EGGMESH_BODY_LIMIT_BYTES: '1' }).bodyLimitBytes).toBe(1);
    expect(loadConfig({ EGGMESH_BODY_LIMIT_BYTES: '9007199254740991' }).bodyLimitBytes).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    expect(problemsOf({ EGGMESH_BODY_LIMIT_BYTES: '0' })).toEqual([
      'EGGMESH_BODY_LIMIT_BYTES: "0" is not a whole number, 1 or more',
    ]);
    expect(problemsOf({ EGGMESH_BODY_LIMIT_BYTES: '9007199254740993' })).toEqual([
      'EGGMESH_BODY_LIMIT_BYTES: "9007199254740993" is not a whole number, 1 or more',
    ]);
    expect(loadConfig({ EGGMESH_RATE_LIMIT_PER_MIN: '0' }).rateLimitPerMin).toBe(0);
    expect(problemsOf({ EGGMESH_RATE_LIMIT_PER_MIN: '-5' })).toEqual([
      'EGGMESH_RATE_LIMIT_PER_MIN: "-5" is not a whole number, 0 or more',
    ]);
    expect(loadConfig({}).auth.clockSkewS).toBe(30);
    expect(loadConfig({ EGGMESH_JWT_CLOCK_SKEW_S: '0' }).auth.clockSkewS).toBe(0);
    expect(loadConfig({ EGGMESH_JWT_CLOCK_SKEW_S: '300' }).auth.clockSkewS).toBe(300);
    expect(problemsOf({ EGGMESH_JWT_CLOCK_SKEW_S: '301' })).toEqual([
      'EGGMESH_JWT_CLOCK_SKEW_S: "301" is not a whole number from 0 to 300',
    ]);
  });

  it('choices: the default when unset, any listed word, anything else refused with the list', () => {
    expect(loadConfig({}).logLevel).toBe('info');
    expect(loadConfig({ EGGMESH_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(loadConfig({ EGGMESH_SQLITE_SYNC: 'full' }).sqliteSync).toBe('full');
    expect(problemsOf({ EGGMESH_LOG_LEVEL: 'verbose' })).toEqual([
      'EGGMESH_LOG_LEVEL: "verbose" is not one of fatal, error, warn, info, debug, trace, silent',
    ]);
    expect(problemsOf({ EGGMESH_SQLITE_SYNC: 'FULL' })).toEqual([
      'EGGMESH_SQLITE_SYNC: "FULL" is not one of normal, full',
    ]);
    expect(problemsOf({ EGGMESH_STORE: '' })).toEqual([
      'EGGMESH_STORE: "" is empty; expected one of sqlite, mongodb, or leave it unset for the default sqlite',
    ]);
  });

  it('flags: true/1 and false/0, anything else refused', () => {
    expect(loadConfig({}).logRequests).toBe(false);
    expect(loadConfig({ EGGMESH_LOG_REQUESTS: 'true' }).logRequests).toBe(true);
    expect(loadConfig({ EGGMESH_LOG_REQUESTS: '1' }).logRequests).toBe(true);
    expect(loadConfig({ EGGMESH_LOG_REQUESTS: '0' }).logRequests).toBe(false);
    expect(problemsOf({ EGGMESH_LOG_REQUESTS: 'yes' })).toEqual([
      'EGGMESH_LOG_REQUESTS: "yes" is not one of true, false, 1, 0',
    ]);
  });

  it('text: the default when unset, any non-empty value; optional text stays unset', () => {
    expect(loadConfig({ EGGMESH_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(problemsOf({ EGGMESH_HOST: '' })).toEqual([
      'EGGMESH_HOST: "" is empty; expected a value, or leave it unset for the default 127.0.0.1',
    ]);
    expect(loadConfig({}).auth).not.toHaveProperty('issuer');
    expect(loadConfig({ EGGMESH_JWT_ISSUER: 'https://id.example' }).auth.issuer).toBe('https://id.example');
    expect(problemsOf({ EGGMESH_JWT_ISSUER: '' })).toEqual([
      'EGGMESH_JWT_ISSUER: "" is empty; expected a value, or leave it unset',
    ]);
  });

  it('URLs: optional, trimmed, refused when they do not parse', () => {
    expect(loadConfig({}).upstreams.write).toBe('http://127.0.0.1:3034');
    expect(loadConfig({ EGGMESH_WRITE_API_URL: 'http://write.internal:9000' }).upstreams.write).toBe(
      'http://write.internal:9000',
    );
    expect(loadConfig({ EGGMESH_WRITE_API_URL: ' http://write.internal:9001 ' }).upstreams.write).toBe(
      'http://write.internal:9001',
    );
    expect(problemsOf({ EGGMESH_WRITE_API_URL: '127.0.0.1:9000' })).toEqual([
      'EGGMESH_WRITE_API_URL: "127.0.0.1:9000" is not a URL such as http://127.0.0.1:3034',
    ]);
    expect(problemsOf({ EGGMESH_WRITE_API_URL: 'http://' })).toEqual([
      'EGGMESH_WRITE_API_URL: "http://" is not a URL such as http://127.0.0.1:3034',
    ]);
  });

  it('the JWT secret: at least 32 characters, and an error never shows it', () => {
    const short = 's3cret-'.repeat(5).slice(0, 31);
    const problems = problemsOf({ EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: short });
    expect(problems).toEqual([
      'EGGMESH_JWT_SECRET: an HS256 secret needs at least 32 characters (this one has 31)',
    ]);
    expect(problems.join('\n')).not.toContain(short);
    const secret = 'x'.repeat(32);
    expect(loadConfig({ EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: secret }).auth.secret).toBe(secret);
  });

  it('the MongoDB write concern: majority or a number of members', () => {
    expect(loadConfig({}).mongodb.writeConcern).toBe('majority');
    expect(loadConfig({ EGGMESH_MONGODB_WRITE_CONCERN: '2' }).mongodb.writeConcern).toBe(2);
    expect(problemsOf({ EGGMESH_MONGODB_WRITE_CONCERN: 'all' })).toEqual([
      'EGGMESH_MONGODB_WRITE_CONCERN: "all" is not majority or a number of members',
    ]);
    expect(problemsOf({ EGGMESH_MONGODB_WRITE_CONCERN: '' })).toEqual([
      'EGGMESH_MONGODB_WRITE_CONCERN: "" is empty; expected majority or a number of members, or leave it unset for the default majority',
    ]);
  });

  it('lists every invalid setting at once, in table order, before any cross-field check', () => {
    expect(
      problemsOf({
        EGGMESH_STORE: 'postgres',
        WRITE_API_PORT: 'abc',
        EGGMESH_LOG_LEVEL: 'loud',
        EGGMESH_LIST_DEFAULT_LIMIT: '50',
        EGGMESH_LIST_MAX_LIMIT: '10',
      }),
    ).toEqual([
      'WRITE_API_PORT: "abc" is not a whole number from 0 to 65535',
      'EGGMESH_LOG_LEVEL: "loud" is not one of fatal, error, warn, info, debug, trace, silent',
      'EGGMESH_STORE: "postgres" is not one of sqlite, mongodb',
    ]);
    expect(problemsOf({ EGGMESH_LIST_DEFAULT_LIMIT: '50', EGGMESH_LIST_MAX_LIMIT: '10' })).toEqual([
      'EGGMESH_LIST_DEFAULT_LIMIT must not exceed EGGMESH_LIST_MAX_LIMIT',
    ]);
  });
});
