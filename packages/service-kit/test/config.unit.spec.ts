import { readFileSync } from 'node:fs';
import { ConfigError, configSchema, loadConfig } from '@eggmesh/service-kit';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
const documented = new Map(
  [...doc.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim().replace(/`/g, '')]),
);

describe('configuration', () => {
  it('documents every setting, and only real ones', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(configSchema.shape).sort());
  });

  it('documents the defaults the code uses', () => {
    const defaults = configSchema.parse({});
    for (const [name, value] of Object.entries(defaults)) {
      if (value === undefined) continue;
      expect(documented.get(name), name).toBe(String(value));
    }
  });

  it('gives the documented ports and a frozen object', () => {
    const config = loadConfig({});
    expect(config.ports).toEqual({ write: 3034, read: 3035, projector: 3036, edge: 5088, relay: 3037 });
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
    });
    expect(loadConfig({ EGGMESH_EVENT_LOOP_STALL_MS: '0' }).eventLoopStallMs).toBe(0);
    const error = (() => {
      try {
        loadConfig({
          EGGMESH_HTTP_HEADERS_TIMEOUT_MS: '5000',
          EGGMESH_HTTP_REQUEST_TIMEOUT_MS: '1000',
          EGGMESH_HEALTH_PROBE_TIMEOUT_MS: '9000',
        });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toMatch(/EGGMESH_HTTP_HEADERS_TIMEOUT_MS must not exceed/);
    expect(String(error)).toMatch(/EGGMESH_HEALTH_PROBE_TIMEOUT_MS must not exceed/);
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
