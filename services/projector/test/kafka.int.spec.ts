import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { kafkajsClient, projectorGroup, Relay } from '@eggmesh/log-kafka';
import { dataFiles, openPrimaryStore, type SqlitePrimaryStore } from '@eggmesh/store-sqlite';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sharedKafkaBrokers } from '../../../infra/test/shared-servers.js';
import {
  coop,
  create,
  ensureBuilt,
  farm,
  freePort,
  get,
  hen,
  idFor,
  parseMetrics,
  type Service,
  startProjector,
  stop,
  TestClock,
  tempDir,
  waitReady,
} from './helpers.js';

beforeAll(ensureBuilt, 180_000);

const brokers = await sharedKafkaBrokers();

const closedPort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 1));
    });
  });

describe(`the projector on the Kafka log (${inject('kafkaServer')})`, () => {
  const topic = `t.${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  const clock = new TestClock(Date.parse('2026-03-10T08:00:00Z'));
  let dir: string;
  let primary: SqlitePrimaryStore;
  const services: Service[] = [];
  const relayStop = new AbortController();
  let relayRun: Promise<void> | undefined;
  const relayClient = kafkajsClient({ brokers: [brokers], topic });

  beforeAll(async () => {
    dir = tempDir('eggmesh-projector-kafka-');
    primary = openPrimaryStore({ file: dataFiles(dir).primary, clock: clock.read });
    primary.commitSync([
      create('farm', idFor('farm', 1), farm()),
      create('coop', idFor('coop', 1), coop(idFor('farm', 1))),
      ...[1, 2, 3].map((i) => create('hen', idFor('hen', i), hen(idFor('coop', 1)))),
    ]);
  });
  afterAll(async () => {
    for (const s of services) await stop(s);
    relayStop.abort();
    await relayRun;
    await relayClient.close();
    await primary?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('with the broker down at start: healthy, not ready, and says why', async () => {
    const service = startProjector(dir, await freePort(), {
      EGGMESH_LOG: 'kafka',
      EGGMESH_KAFKA_BROKERS: `127.0.0.1:${await closedPort()}`,
      EGGMESH_KAFKA_TOPIC: topic,
      EGGMESH_LOG_LEVEL: 'info',
    });
    services.push(service);
    const deadline = Date.now() + 30_000;
    while (!/cannot reach the broker/.test(service.output()) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const answer = await get(`${service.url}/ready`);
    expect(answer?.status).toBe(503);
    expect(JSON.parse(answer!.text)).toMatchObject({
      status: 'unavailable',
      error: expect.stringMatching(/Kafka/),
    });
    expect((await get(`${service.url}/health`))?.status).toBe(200);
    expect(service.output()).toMatch(/cannot reach the broker/);
    await stop(service, 'SIGTERM');
  });

  it('applies what the relay publishes, shows lag in entries and ms, and commits offsets after its checkpoint', async () => {
    const service = startProjector(dir, await freePort(), {
      EGGMESH_LOG: 'kafka',
      EGGMESH_KAFKA_BROKERS: brokers,
      EGGMESH_KAFKA_TOPIC: topic,
    });
    services.push(service);
    // Nothing published yet: ready, at 0.
    expect(await waitReady(service, (r) => r.status === 'ready')).toMatchObject({
      position: 0,
      head: 0,
      lag: 0,
    });
    const relay = new Relay({
      source: primary.log,
      client: relayClient,
      idleWaitMs: 200,
      allowUnreplicated: true,
    });
    relayRun = relay.run(relayStop.signal);
    const head = primary.headSync();
    expect(await waitReady(service, (r) => r.position === head)).toMatchObject({
      position: head,
      head,
      lag: 0,
    });
    const metrics = parseMetrics((await get(`${service.url}/metrics`))!.text);
    expect(metrics.get('eggmesh_projector_position')).toBe(head);
    expect(metrics.get('eggmesh_log_head')).toBe(head);
    expect(metrics.get('eggmesh_projector_lag_entries')).toBe(0);
    expect(metrics.get('eggmesh_projector_lag_ms')).toBe(0);
    // The group's offset is past the last applied message: a restart starts after it.
    const committed = await relayClient.consumer(projectorGroup(topic)).committed();
    expect(committed).toBe((await relayClient.offsets()).high);
    await stop(service, 'SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
