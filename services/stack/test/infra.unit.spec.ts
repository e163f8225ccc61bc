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

  it('pnpm start:scaled means MongoDB and Kafka', () => {
    expect(scaledEnv).toEqual({ EGGMESH_STORE: 'mongodb', EGGMESH_LOG: 'kafka' });
  });
});
