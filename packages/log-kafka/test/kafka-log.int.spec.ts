import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeEntry, type KafkaClient, KafkaEventLog, Relay } from '../src/index.js';
import {
  client,
  eventually,
  freshTopic,
  kafkaServer,
  positionsOf,
  sourceOf,
  type TempPrimary,
  tempPrimary,
  topicPositions,
} from './helpers.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe(`the Kafka event log on ${kafkaServer()}`, () => {
  let primary: TempPrimary;
  let kafka: KafkaClient;
  const stop = new AbortController();
  const closing: Array<() => Promise<void>> = [];

  beforeEach(() => {
    primary = tempPrimary();
    kafka = client(freshTopic());
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await kafka.close();
    await primary.dispose();
  });

  const startRelay = () => {
    const relay = new Relay({
      source: sourceOf(primary.store),
      client: kafka,
      batchSize: 7,
      idleWaitMs: 200,
    });
    const controller = new AbortController();
    const running = relay.run(controller.signal);
    closing.push(async () => {
      controller.abort();
      await running;
    });
    return {
      relay,
      stop: async () => {
        controller.abort();
        await running;
      },
    };
  };
  const openLog = (groupId = `g-${randomUUID()}`) => {
    const log = new KafkaEventLog({ client: kafka, groupId, bufferEntries: 50 });
    closing.push(() => log.close());
    return log;
  };
  const readAll = async (log: KafkaEventLog, after: number, until: number) => {
    const got = [];
    let position = after;
    while (position < until) {
      const batch = await log.read(position, 10);
      if (batch.length === 0) {
        await log.waitBeyond(position, 1000, stop.signal);
        continue;
      }
      got.push(...batch);
      position = batch[batch.length - 1]!.position;
    }
    return got;
  };

  it('the relay publishes the primary log in order, keyed by entity; a consumer reads each position once', async () => {
    await primary.write(30);
    const { relay } = startRelay();
    const log = openLog();
    const entries = await readAll(log, 0, 30);
    expect(positionsOf(entries)).toEqual(range(1, 30));
    expect(entries).toEqual(await primary.store.log.read(0, 100));
    expect(await log.head()).toBe(30);
    expect(relay.isReady).toBe(true);
    expect(await topicPositions(kafka)).toEqual(range(1, 30));
  });

  it('drops duplicates by position (a relay that wrote a batch twice)', async () => {
    await primary.write(10);
    const producer = await kafka.producer();
    const all = await primary.store.log.read(0, 100);
    await kafka.ensureTopic(1);
    await producer.send(all.slice(0, 6).map(encodeEntry));
    await producer.send(all.slice(3, 10).map(encodeEntry)); // 4..6 again
    await producer.send(all.slice(9).map(encodeEntry)); // 10 again
    await producer.close();
    const log = openLog();
    expect(positionsOf(await readAll(log, 0, 10))).toEqual(range(1, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await log.read(10, 100)).toEqual([]);
  });

  it('waitBeyond wakes when a new entry reaches the topic, and answers false on timeout', async () => {
    await primary.write(2);
    startRelay();
    const log = openLog();
    await readAll(log, 0, 2);
    expect(await log.waitBeyond(2, 300)).toBe(false);
    const waiting = log.waitBeyond(2, 20_000);
    await primary.write(1);
    expect(await waiting).toBe(true);
    expect(positionsOf(await log.read(2, 10))).toEqual([3]);
    const aborted = new AbortController();
    const pending = log.waitBeyond(3, 20_000, aborted.signal);
    aborted.abort();
    expect(await pending).toBe(false);
  });

  it('resumes after the acknowledged position, and rewinds when asked for older entries', async () => {
    await primary.write(40);
    startRelay();
    const groupId = `g-${randomUUID()}`;
    const first = openLog(groupId);
    await readAll(first, 0, 25);
    await first.acknowledge(25);
    await first.close();

    const second = openLog(groupId);
    // The committed offset is past position 25: the new member starts there.
    await eventually('the second member to fetch', async () => (await second.head()) === 40);
    expect(positionsOf(await readAll(second, 25, 40))).toEqual(range(26, 40));
    // A consumer whose checkpoint went back (a restored projection store) gets everything again.
    expect(positionsOf(await readAll(second, 10, 40))).toEqual(range(11, 40));
  });

  it('a restarted relay resumes after the topic’s last message: nothing skipped, nothing twice', async () => {
    await primary.write(12);
    const first = startRelay();
    await eventually('12 published', () => first.relay.position === 12);
    await first.stop();
    await primary.write(9);
    const second = startRelay();
    await eventually('21 published', () => second.relay.position === 21);
    expect(await topicPositions(kafka)).toEqual(range(1, 21));
    const lag = await second.relay.lag();
    expect(lag).toMatchObject({ head: 21, published: 21, entries: 0, ms: 0 });
  });

  it('pauses fetching at its buffer size and resumes as reads drain it', async () => {
    await primary.write(180);
    startRelay();
    const log = openLog();
    expect(positionsOf(await readAll(log, 0, 180))).toEqual(range(1, 180));
    // The window let the oldest read entries go; reading them again fetches them again.
    expect(positionsOf(await readAll(log, 0, 180))).toEqual(range(1, 180));
    await log.acknowledge(180);
    expect(positionsOf(await log.read(170, 100))).toEqual(range(171, 180));
  });
});
