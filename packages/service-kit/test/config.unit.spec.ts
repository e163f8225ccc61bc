import { readFileSync } from 'node:fs';
import { ConfigError, openAccessWarnings, parseConfig, settingNames, settings } from '@eggmesh/service-kit';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
const documented = new Map(
  [...doc.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim().replace(/`/g, '')]),
);

describe('configuration', () => {
  it('documents every setting, and only real ones', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(settings).sort());
  });

  it('documents the defaults the code uses', () => {
    for (const [name, setting] of Object.entries(settings)) {
      if (setting.default === undefined) continue;
      expect(documented.get(name), name).toBe(String(setting.default));
    }
  });

  it('documents each setting in its section', () => {
    const sections = [...doc.matchAll(/^## (.+)$/gm)].map((m) => ({ title: m[1]!, at: m.index ?? 0 }));
    for (const [name, setting] of Object.entries(settings)) {
      const at = doc.indexOf(`| \`${name}\` |`);
      const section = sections.filter((s) => s.at < at).at(-1)?.title ?? '';
      expect(section.toLowerCase(), name).toContain(setting.section);
    }
  });

  it('accepts each default when it is set explicitly, and gives the same config', () => {
    const explicit = Object.fromEntries(
      Object.entries(settings)
        .filter(([, setting]) => setting.default !== undefined)
        .map(([name, setting]) => [name, String(setting.default)]),
    );
    expect(Object.keys(explicit).length).toBeGreaterThanOrEqual(30);
    expect(parseConfig(explicit)).toEqual(parseConfig({}));
  });

  it('gives the documented ports and a frozen object', () => {
    const config = parseConfig({});
    expect(config.ports).toEqual({ write: 3034, read: 5088, projector: 3036, relay: 3037 });
    expect(config.dev).toEqual({
      mongodbPort: 27017,
      kafkaPort: 9092,
      postgresPort: 5432,
      connectPort: 8083,
    });
    expect(config.host).toBe('127.0.0.1');
    expect(Object.isFrozen(config)).toBe(true);
    expect(config.upstreams.write).toBe('http://127.0.0.1:3034');
  });

  it('reads overrides and refuses bad values with every problem listed', () => {
    expect(parseConfig({ WRITE_API_PORT: '4000', EGGMESH_LOG_REQUESTS: 'true' })).toMatchObject({
      ports: { write: 4000 },
      logRequests: true,
    });
    const error = (() => {
      try {
        parseConfig({ WRITE_API_PORT: 'abc', EGGMESH_SQLITE_SYNC: 'sometimes' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toMatch(/WRITE_API_PORT/);
    expect(String(error)).toMatch(/EGGMESH_SQLITE_SYNC/);
    expect(() => parseConfig({ EGGMESH_LIST_DEFAULT_LIMIT: '50', EGGMESH_LIST_MAX_LIMIT: '10' })).toThrow(
      /must not exceed/,
    );
  });

  it('each command reads and validates its own variables only', () => {
    expect(settingNames('projector')).toContain('EGGMESH_KAFKA_TOPIC');
    expect(settingNames('projector')).not.toContain('EGGMESH_GRAPHQL_MAX_DEPTH');
    expect(settingNames('read-api')).toContain('EGGMESH_GRAPHQL_MAX_DEPTH');
    expect(settingNames('write-api')).not.toContain('EGGMESH_KAFKA_BROKERS');
    // A bad value of a variable the projector does not read does not stop the projector...
    const env = { EGGMESH_GRAPHQL_MAX_DEPTH: 'deep', EGGMESH_KAFKA_TOPIC: 'eggs' };
    const projector = parseConfig(env, 'projector');
    expect(projector.kafka.topic).toBe('eggs');
    expect(projector).not.toHaveProperty('graphql');
    // ...but does stop the read-api, which reads it.
    expect(() => parseConfig(env, 'read-api')).toThrow(/EGGMESH_GRAPHQL_MAX_DEPTH: "deep"/);
    expect(parseConfig({}, 'read-api').graphql.maxDepth).toBe(8);
  });

  it('keeps tuning internals as constants, not settings', () => {
    const config = parseConfig({});
    expect(config.graphql).toMatchObject({ maxFields: 2000, maxTokens: 5000, maxRows: 100_000 });
    expect(config.projector).toEqual({ batchSize: 2000, idlePollMs: 5000 });
    for (const internal of [
      'EGGMESH_GRAPHQL_MAX_FIELDS',
      'EGGMESH_GRAPHQL_MAX_TOKENS',
      'EGGMESH_GRAPHQL_MAX_ROWS',
      'EGGMESH_GRAPHQL_MAX_RESPONSE_BYTES',
      'EGGMESH_PROJECTOR_BATCH',
      'EGGMESH_PROJECTOR_IDLE_POLL_MS',
      'EGGMESH_SHUTDOWN_TIMEOUT_MS',
      'EGGMESH_MONGODB_WRITE_CONCERN',
    ])
      expect(Object.keys(settings), internal).not.toContain(internal);
    expect(Object.keys(settings).length).toBeLessThanOrEqual(53);
  });

  it('parses the MongoDB settings: store choice, URI, database', () => {
    expect(parseConfig({})).toMatchObject({
      store: 'sqlite',
      mongodb: { uri: 'mongodb://127.0.0.1:27017', dbName: 'eggmesh' },
    });
    expect(
      parseConfig({
        EGGMESH_STORE: 'mongodb',
        EGGMESH_MONGODB_URI: 'mongodb://a,b,c/?replicaSet=rs0&w=majority',
        EGGMESH_MONGODB_DB: 'farm',
        EGGMESH_DEV_MONGODB_PORT: '0',
      }),
    ).toMatchObject({
      store: 'mongodb',
      mongodb: { uri: 'mongodb://a,b,c/?replicaSet=rs0&w=majority', dbName: 'farm' },
      dev: { mongodbPort: 0 },
    });
    expect(() => parseConfig({ EGGMESH_STORE: 'postgres' })).toThrow(/EGGMESH_STORE/);
  });

  it('puts the projections where EGGMESH_MONGODB_PROJECTIONS_URI says: its path is the database', () => {
    expect(parseConfig({ EGGMESH_MONGODB_DB: 'farm' }).mongodb.projections).toEqual({
      uri: 'mongodb://127.0.0.1:27017',
      dbName: 'farm',
    });
    expect(
      parseConfig({ EGGMESH_MONGODB_PROJECTIONS_URI: 'mongodb://p,q/eggmesh_projections?replicaSet=rs1' })
        .mongodb.projections,
    ).toEqual({ uri: 'mongodb://p,q/eggmesh_projections?replicaSet=rs1', dbName: 'eggmesh_projections' });
    expect(
      parseConfig({ EGGMESH_MONGODB_DB: 'farm', EGGMESH_MONGODB_PROJECTIONS_URI: 'mongodb://p:27018' })
        .mongodb.projections,
    ).toEqual({ uri: 'mongodb://p:27018', dbName: 'farm' });
    expect(() => parseConfig({ EGGMESH_MONGODB_PROJECTIONS_URI: 'postgres://p/x' })).toThrow(
      /EGGMESH_MONGODB_PROJECTIONS_URI/,
    );
  });
});

/** The lines of the ConfigError `env` gets (after `invalid configuration:`), or [] when it is valid. */
function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    parseConfig(env);
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
    expect(parseConfig({}).ports.write).toBe(3034);
    expect(parseConfig({ WRITE_API_PORT: undefined }).ports.write).toBe(3034);
    expect(parseConfig({ WRITE_API_PORT: '0' }).ports.write).toBe(0);
    expect(parseConfig({ WRITE_API_PORT: '65535' }).ports.write).toBe(65_535);
    expect(parseConfig({ RELAY_PORT: '0080' }).ports.relay).toBe(80);
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
    expect(parseConfig({ EGGMESH_BODY_LIMIT_BYTES: '1' }).bodyLimitBytes).toBe(1);
    expect(parseConfig({ EGGMESH_BODY_LIMIT_BYTES: '9007199254740991' }).bodyLimitBytes).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    expect(problemsOf({ EGGMESH_BODY_LIMIT_BYTES: '0' })).toEqual([
      'EGGMESH_BODY_LIMIT_BYTES: "0" is not a whole number, 1 or more',
    ]);
    expect(problemsOf({ EGGMESH_BODY_LIMIT_BYTES: '9007199254740993' })).toEqual([
      'EGGMESH_BODY_LIMIT_BYTES: "9007199254740993" is not a whole number, 1 or more',
    ]);
    expect(parseConfig({ EGGMESH_RATE_LIMIT_PER_MIN: '0' }).rateLimitPerMin).toBe(0);
    expect(parseConfig({}).trustedProxies).toEqual(['loopback']);
    expect(parseConfig({ EGGMESH_TRUSTED_PROXIES: 'none' }).trustedProxies).toEqual([]);
    expect(
      parseConfig({ EGGMESH_TRUSTED_PROXIES: '10.0.0.5, 172.16.0.0/12,fd00::/8 ,uniquelocal' })
        .trustedProxies,
    ).toEqual(['10.0.0.5', '172.16.0.0/12', 'fd00::/8', 'uniquelocal']);
    expect(problemsOf({ EGGMESH_TRUSTED_PROXIES: 'proxy.local, 10.0.0.0/33, 10.0.0.1' })).toEqual([
      'EGGMESH_TRUSTED_PROXIES: "proxy.local, 10.0.0.0/33, 10.0.0.1" is not addresses, CIDR ranges, loopback, linklocal or uniquelocal separated by commas (or none)',
    ]);
    expect(problemsOf({ EGGMESH_RATE_LIMIT_PER_MIN: '-5' })).toEqual([
      'EGGMESH_RATE_LIMIT_PER_MIN: "-5" is not a whole number, 0 or more',
    ]);
    expect(parseConfig({}).auth.clockSkewS).toBe(30);
    expect(parseConfig({ EGGMESH_JWT_CLOCK_SKEW_S: '0' }).auth.clockSkewS).toBe(0);
    expect(parseConfig({ EGGMESH_JWT_CLOCK_SKEW_S: '300' }).auth.clockSkewS).toBe(300);
    expect(problemsOf({ EGGMESH_JWT_CLOCK_SKEW_S: '301' })).toEqual([
      'EGGMESH_JWT_CLOCK_SKEW_S: "301" is not a whole number from 0 to 300',
    ]);
  });

  it('choices: the default when unset, any listed word, anything else refused with the list', () => {
    expect(parseConfig({}).logLevel).toBe('info');
    expect(parseConfig({ EGGMESH_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(parseConfig({ EGGMESH_LOG: 'kafka' }).log).toBe('kafka');
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
    expect(parseConfig({}).logRequests).toBe(false);
    expect(parseConfig({ EGGMESH_LOG_REQUESTS: 'true' }).logRequests).toBe(true);
    expect(parseConfig({ EGGMESH_LOG_REQUESTS: '1' }).logRequests).toBe(true);
    expect(parseConfig({ EGGMESH_LOG_REQUESTS: '0' }).logRequests).toBe(false);
    expect(problemsOf({ EGGMESH_LOG_REQUESTS: 'yes' })).toEqual([
      'EGGMESH_LOG_REQUESTS: "yes" is not one of true, false, 1, 0',
    ]);
  });

  it('text: the default when unset, any non-empty value; optional text stays unset', () => {
    expect(parseConfig({ EGGMESH_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(problemsOf({ EGGMESH_HOST: '' })).toEqual([
      'EGGMESH_HOST: "" is empty; expected a value, or leave it unset for the default 127.0.0.1',
    ]);
    expect(parseConfig({}).auth).not.toHaveProperty('issuer');
    expect(parseConfig({ EGGMESH_JWT_ISSUER: 'https://id.example' }).auth.issuer).toBe('https://id.example');
    expect(problemsOf({ EGGMESH_JWT_ISSUER: '' })).toEqual([
      'EGGMESH_JWT_ISSUER: "" is empty; expected a value, or leave it unset',
    ]);
  });

  it('URLs: optional, trimmed, refused when they do not parse', () => {
    expect(parseConfig({}).upstreams.write).toBe('http://127.0.0.1:3034');
    expect(parseConfig({ EGGMESH_WRITE_API_URL: 'http://write.internal:9000' }).upstreams.write).toBe(
      'http://write.internal:9000',
    );
    expect(parseConfig({ EGGMESH_WRITE_API_URL: ' http://write.internal:9001 ' }).upstreams.write).toBe(
      'http://write.internal:9001',
    );
    expect(problemsOf({ EGGMESH_WRITE_API_URL: '127.0.0.1:9000' })).toEqual([
      'EGGMESH_WRITE_API_URL: "127.0.0.1:9000" is not a URL such as http://127.0.0.1:3034',
    ]);
    expect(problemsOf({ EGGMESH_WRITE_API_URL: 'http://' })).toEqual([
      'EGGMESH_WRITE_API_URL: "http://" is not a URL such as http://127.0.0.1:3034',
    ]);
  });

  it('CORS origins: none by default, `*`, or a list of origins; anything else refused', () => {
    expect(parseConfig({}).corsOrigin).toBe(false);
    expect(parseConfig({ EGGMESH_CORS_ORIGIN: '*' }).corsOrigin).toBe('*');
    expect(parseConfig({ EGGMESH_CORS_ORIGIN: 'https://a.example, http://b.test:8080/' }).corsOrigin).toEqual(
      ['https://a.example', 'http://b.test:8080'],
    );
    expect(problemsOf({ EGGMESH_CORS_ORIGIN: 'a.example' })).toEqual([
      'EGGMESH_CORS_ORIGIN: "a.example" is not none, *, or origins such as https://app.example separated by commas',
    ]);
    expect(problemsOf({ EGGMESH_CORS_ORIGIN: 'https://a.example/app' })).toHaveLength(1);
  });

  it('warns at start when anyone may write, and louder when any web page may', () => {
    const open = openAccessWarnings(parseConfig({}));
    expect(open).toHaveLength(1);
    expect(open[0]).toContain('EGGMESH_AUTH=none');
    const anyPage = openAccessWarnings(parseConfig({ EGGMESH_CORS_ORIGIN: '*' }));
    expect(anyPage).toHaveLength(2);
    expect(anyPage[1]).toContain('EGGMESH_CORS_ORIGIN=*');
    const secured = { EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: 'x'.repeat(32), EGGMESH_CORS_ORIGIN: '*' };
    expect(openAccessWarnings(parseConfig(secured))).toEqual([]);
  });

  it('the JWT secret: at least 32 characters, and an error never shows it', () => {
    const short = 's3cret-'.repeat(5).slice(0, 31);
    const problems = problemsOf({ EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: short });
    expect(problems).toEqual([
      'EGGMESH_JWT_SECRET: an HS256 secret of at least 32 characters (this one has 31)',
    ]);
    expect(problems.join('\n')).not.toContain(short);
    const secret = 'x'.repeat(32);
    expect(parseConfig({ EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: secret }).auth.secret).toBe(secret);
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
      'EGGMESH_STORE: "postgres" is not one of sqlite, mongodb',
      'EGGMESH_LOG_LEVEL: "loud" is not one of fatal, error, warn, info, debug, trace, silent',
    ]);
    expect(problemsOf({ EGGMESH_LIST_DEFAULT_LIMIT: '50', EGGMESH_LIST_MAX_LIMIT: '10' })).toEqual([
      'EGGMESH_LIST_DEFAULT_LIMIT must not exceed EGGMESH_LIST_MAX_LIMIT',
    ]);
  });
});
