import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { kafkajsClient } from '@eggmesh/log-kafka';
import type { WriteOperation } from '@eggmesh/store';
import { dataFiles, openPrimaryStore, type SqlitePrimaryStore } from '@eggmesh/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureBuilt,
  eventually,
  freePort,
  freshTopic,
  getJson,
  getText,
  kafkaBrokers,
  parseMetrics,
  type Service,
  startService,
  stop,
  tempDir,
} from './helpers.js';

beforeAll(() => ensureBuilt(['relay']), 180_000);

describe('the relay service', () => {
  let dir: string;
  let primary: SqlitePrimaryStore;
  const services: Service[] = [];
  const write = async (count: number) => {
    for (let i = 0; i < count; i += 1) {
      const op: WriteOperation = {
        op: 'create',
        entity: 'farm',
        id: randomUUID(),
        payload: { name: `Farm ${i}`, farm_type: 'local_farm', zone: 'north' },
      };
      await primary.commit([op]);
    }
  };

  beforeAll(async () => {
    dir = tempDir();
    primary = openPrimaryStore({ file: dataFiles(dir).primary, clock: () => Date.now() - 5000 });
    await write(25);
  });
  afterAll(async () => {
    for (const s of services) await stop(s);
    await primary.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (env: Record<string, string>) => {
    const port = await freePort();
    const service = startService(
      'relay',
      'main.js',
      { EGGMESH_DATA_DIR: dir, EGGMESH_LOG: 'kafka', ...env },
      'RELAY_PORT',
      port,
    );
    services.push(service);
    return service;
  };

  it('with the broker down: healthy, not ready, says so in its log, and its lag counts every entry', async () => {
    const closed = await freePort();
    const relay = await start({
      EGGMESH_KAFKA_BROKERS: `127.0.0.1:${closed}`,
      EGGMESH_KAFKA_TOPIC: freshTopic(),
    });
    const health = await eventually('/health', () => getJson(`${relay.url}/health`));
    expect(health).toMatchObject({ status: 200, body: { status: 'ok', service: 'relay' } });
    const ready = await eventually('a failed attempt', async () => {
      const answer = await getJson(`${relay.url}/ready`);
      return answer?.status === 503 && /publishing failed/.test(relay.output()) ? answer : undefined;
    });
    expect(ready.body).toMatchObject({ status: 'unavailable', published: null });
    const metrics = parseMetrics((await getText(`${relay.url}/metrics`)) ?? '');
    expect(metrics.get('eggmesh_relay_ready')).toBe(0);
    expect(metrics.get('eggmesh_log_head')).toBe(25);
    expect(metrics.get('eggmesh_relay_lag_entries')).toBe(25);
    expect(metrics.get('eggmesh_relay_lag_ms')).toBeGreaterThanOrEqual(5000);
    await stop(relay, 'SIGTERM');
    expect(await relay.exited).toBe(0);
  });

  it('with the broker up: ready, publishes everything, lag 0 in entries and ms', async () => {
    const relay = await start({
      EGGMESH_KAFKA_BROKERS: kafkaBrokers(),
      EGGMESH_KAFKA_TOPIC: freshTopic(),
    });
    const ready = await eventually('ready', async () => {
      const answer = await getJson(`${relay.url}/ready`);
      return answer?.status === 200 && answer.body.lag === 0 ? answer : undefined;
    });
    expect(ready.body).toMatchObject({ status: 'ready', published: 25, head: 25, lag: 0, lagMs: 0 });
    await write(5);
    const metrics = await eventually('30 published', async () => {
      const m = parseMetrics((await getText(`${relay.url}/metrics`)) ?? '');
      return m.get('eggmesh_relay_published_position') === 30 ? m : undefined;
    });
    expect(metrics.get('eggmesh_relay_ready')).toBe(1);
    expect(metrics.get('eggmesh_relay_lag_entries')).toBe(0);
    expect(metrics.get('eggmesh_relay_lag_ms')).toBe(0);
    expect(metrics.get('eggmesh_relay_published_total')).toBe(30);
    await stop(relay, 'SIGTERM');
    expect(await relay.exited).toBe(0);
  });

  it('refuses a topic with fewer replicas than configured: not ready, says why, publishes nothing', async () => {
    const topic = freshTopic();
    // The topic exists already, made on the single-node test broker: one replica, min.insync.replicas 1.
    const kafka = kafkajsClient({ brokers: [kafkaBrokers()], topic, clientId: 'eggmesh-test' });
    try {
      await kafka.ensureTopic(1);
      const relay = await start({
        EGGMESH_KAFKA_BROKERS: kafkaBrokers(),
        EGGMESH_KAFKA_TOPIC: topic,
        EGGMESH_KAFKA_REPLICATION_FACTOR: '3',
        EGGMESH_KAFKA_MIN_INSYNC_REPLICAS: '2',
      });
      const ready = await eventually('a refusal', async () => {
        const answer = await getJson(`${relay.url}/ready`);
        return answer?.status === 503 && /min\.insync\.replicas/.test(String(answer.body.reason))
          ? answer
          : undefined;
      });
      expect(ready.body).toMatchObject({ status: 'unavailable', published: null });
      expect(String(ready.body.reason)).toMatch(
        /replication factor 1 and min\.insync\.replicas 1, less than the 3 and 2 configured .*an acknowledged entry would be lost with one broker/,
      );
      expect(relay.output()).toMatch(/refusing to publish/);
      expect(await kafka.durability()).toEqual({ replicationFactor: 1, minInsyncReplicas: 1 });
      expect((await kafka.offsets()).high).toBe(0);
      await stop(relay, 'SIGTERM');
      expect(await relay.exited).toBe(0);
    } finally {
      await kafka.close();
    }
  });
});
