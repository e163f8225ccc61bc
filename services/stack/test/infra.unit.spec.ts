import { existsSync } from 'node:fs';
import { parseConfig } from '@eggmesh/service-kit';
import { describe, expect, it } from 'vitest';
import { infraServers, scaledEnv } from '../src/infra.js';

// The local servers `pnpm start:scaled` starts before the services, from one table (src/infra.ts).
describe('the infra servers of the scaled dev stack', () => {
  it('starts none on the embedded tier', () => {
    expect(infraServers(parseConfig({}))).toEqual([]);
  });

  it('starts the MongoDB-wire server, then the Kafka broker, on their dev ports, and points the services at them', () => {
    const config = parseConfig({
      ...scaledEnv,
      EGGMESH_DEV_MONGODB_PORT: '27999',
      EGGMESH_DEV_KAFKA_PORT: '19092',
      EGGMESH_DATA_DIR: '/tmp/eggmesh-infra-test',
    });
    const servers = infraServers(config);
    expect(servers.map((s) => s.name)).toEqual(['mongodb', 'kafka']);
    const [mongo, kafka] = servers;
    expect(mongo?.port).toBe(27999);
    expect(mongo?.serviceEnv).toEqual({ EGGMESH_MONGODB_URI: 'mongodb://127.0.0.1:27999' });
    expect(kafka?.port).toBe(19092);
    expect(kafka?.serviceEnv).toEqual({ EGGMESH_KAFKA_BROKERS: '127.0.0.1:19092' });
    expect(kafka?.env).toMatchObject({
      EGGMESH_DEV_KAFKA_PORT: '19092',
      EGGMESH_DATA_DIR: '/tmp/eggmesh-infra-test',
    });
    for (const server of servers) {
      expect(existsSync(server.script), server.script).toBe(true);
      expect(server.describe).toContain(String(server.port));
    }
  });

  it('any store with any log: MongoDB with the log in the store starts no broker; SQLite with Kafka starts only the broker', () => {
    expect(
      infraServers(parseConfig({ EGGMESH_STORE: 'mongodb', EGGMESH_LOG: 'store' })).map((s) => s.name),
    ).toEqual(['mongodb']);
    expect(
      infraServers(parseConfig({ EGGMESH_STORE: 'sqlite', EGGMESH_LOG: 'kafka' })).map((s) => s.name),
    ).toEqual(['kafka']);
  });

  it('--legacy adds PostgreSQL and Kafka Connect; with --scaled both tiers share one broker, which Connect waits for', () => {
    const dev = {
      EGGMESH_DEV_KAFKA_PORT: '19092',
      EGGMESH_DEV_POSTGRES_PORT: '15432',
      EGGMESH_DEV_CONNECT_PORT: '18083',
    };
    expect(infraServers(parseConfig(dev), { legacy: true }).map((s) => s.name)).toEqual([
      'kafka',
      'postgres',
      'connect',
    ]);
    const both = infraServers(parseConfig({ ...scaledEnv, ...dev }), { legacy: true });
    expect(both.map((s) => s.name)).toEqual(['mongodb', 'kafka', 'postgres', 'connect']);
    const connect = both.find((s) => s.name === 'connect');
    expect(connect?.after).toEqual(['kafka']);
    expect(connect?.env).toMatchObject({ EGGMESH_KAFKA_BROKERS: '127.0.0.1:19092' });
    expect(connect?.serviceEnv).toEqual({ EGGMESH_LEGACY_CONNECT_URL: 'http://127.0.0.1:18083' });
    expect(both.find((s) => s.name === 'postgres')?.serviceEnv).toEqual({
      EGGMESH_LEGACY_DB_URL: 'postgresql://postgres@127.0.0.1:15432/legacy',
    });
  });

  it('pnpm start:scaled means MongoDB and Kafka', () => {
    expect(scaledEnv).toEqual({ EGGMESH_STORE: 'mongodb', EGGMESH_LOG: 'kafka' });
  });
});
