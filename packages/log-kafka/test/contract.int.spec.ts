import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEventLogContract } from '@eggmesh/store/testing';
import { openPrimaryStore } from '@eggmesh/store-sqlite';
import { KafkaEventLog, kafkajsClient, Relay } from '../src/index.js';
import { freshTopic, kafkaBrokers, kafkaServer } from './helpers.js';

// The factory: writes commit to a SQLite primary, a relay runs in-process and copies its log to a
// topic of its own on the run's broker, and the log under test consumes that topic.
runEventLogContract(`Kafka (${kafkaServer()}, fed by an in-process relay from a SQLite primary)`, {
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-kafka-contract-'));
    const file = join(dir, 'primary.db');
    const writer = openPrimaryStore({ file });
    const source = openPrimaryStore({ file, readonly: true });
    const topic = freshTopic();
    const relayClient = kafkajsClient({ brokers: [kafkaBrokers()], topic, clientId: 'eggmesh-relay-test' });
    const consumerClient = kafkajsClient({ brokers: [kafkaBrokers()], topic, clientId: 'eggmesh-log-test' });
    const relay = new Relay({
      source: source.log,
      client: relayClient,
      idleWaitMs: 200,
      allowUnreplicated: true,
    });
    const stop = new AbortController();
    const running = relay.run(stop.signal);
    const log = new KafkaEventLog({ client: consumerClient, groupId: `contract-${randomUUID()}` });
    await log.whenConnected();
    return {
      log,
      writer,
      async dispose() {
        stop.abort();
        await running;
        await relayClient.close();
        await consumerClient.close();
        await source.close();
        await writer.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});
