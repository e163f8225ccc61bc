import { randomUUID } from 'node:crypto';
import {
  type Admin,
  type ConfigResourceTypes,
  type Consumer,
  Kafka,
  type LogEntry as KafkajsLogEntry,
  logLevel as KafkaLogLevel,
  Partitioners,
} from 'kafkajs';
import type {
  FetchedBatch,
  IncomingMessage,
  KafkaClient,
  KafkaClientOptions,
  OutgoingMessage,
  PartitionConsumer,
  TopicDurability,
  TopicOffsets,
  TopicProducer,
} from './client.js';

/**
 * kafkajs's `ConfigResourceTypes.TOPIC` (the Kafka protocol's resource type 2): kafkajs is CommonJS and
 * its enums are not named exports Node's ES module loader finds, so the value is written here.
 */
const TOPIC_RESOURCE = 2 as ConfigResourceTypes;

/** Retries inside the client stay short: the callers (relay, projector) retry on their own, and say so. */
const RETRY = { initialRetryTime: 200, retries: 4, maxRetryTime: 2000 } as const;

/** `KafkaClient` over kafkajs 2.2.4. */
export function kafkajsClient(options: KafkaClientOptions): KafkaClient {
  const onLog = options.onLog;
  const kafka = new Kafka({
    clientId: options.clientId ?? 'eggmesh',
    brokers: [...options.brokers],
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: RETRY,
    logLevel: onLog ? KafkaLogLevel.WARN : KafkaLogLevel.NOTHING,
    logCreator:
      () =>
      ({ level, log }: KafkajsLogEntry) => {
        if (!onLog) return;
        const { message, timestamp: _t, logger: _l, ...rest } = log;
        const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
        onLog(level <= KafkaLogLevel.ERROR ? 'error' : 'warn', `kafka: ${message}${extra}`);
      },
  });
  const topic = options.topic;
  let admin: Promise<Admin> | undefined;
  const connectedAdmin = (): Promise<Admin> => {
    if (!admin) {
      const a = kafka.admin({ retry: RETRY });
      admin = a.connect().then(
        () => a,
        (error: unknown) => {
          admin = undefined;
          throw error;
        },
      );
    }
    return admin;
  };
  const open = new Set<{ close(): Promise<void> }>();

  const partitions = async (): Promise<number> => {
    const a = await connectedAdmin();
    if (!(await a.listTopics()).includes(topic)) return 0;
    const { topics } = await a.fetchTopicMetadata({ topics: [topic] });
    return topics[0]?.partitions.length ?? 0;
  };

  return {
    topic,
    partitions,
    async ensureTopic(count) {
      const existing = await partitions();
      if (existing > 0) return existing;
      const a = await connectedAdmin();
      const { replicationFactor, minInsyncReplicas } = options.durability ?? {
        replicationFactor: 1,
        minInsyncReplicas: 1,
      };
      // false when it exists already (another process won the race): fine either way.
      await a
        .createTopics({
          waitForLeaders: true,
          topics: [
            {
              topic,
              numPartitions: count,
              replicationFactor,
              configEntries: [{ name: 'min.insync.replicas', value: String(minInsyncReplicas) }],
            },
          ],
        })
        .catch((error: unknown) => {
          // kafkajs says "Topic creation errors" and keeps the broker's reasons in `errors`.
          const reasons = (error as { errors?: { message?: string }[] }).errors?.map((e) => e.message);
          const why = reasons?.length
            ? reasons.join('; ')
            : error instanceof Error
              ? error.message
              : String(error);
          throw new Error(
            `kafka: cannot create topic ${topic} (replication factor ${replicationFactor}, min.insync.replicas ${minInsyncReplicas}): ${why}`,
            { cause: error },
          );
        });
      return partitions();
    },
    async durability(): Promise<TopicDurability | null> {
      const a = await connectedAdmin();
      if (!(await a.listTopics()).includes(topic)) return null;
      const { topics } = await a.fetchTopicMetadata({ topics: [topic] });
      const replicas = topics[0]?.partitions.find((p) => p.partitionId === 0)?.replicas.length ?? 0;
      const described = await a.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: ['min.insync.replicas'] }],
      });
      const entry = described.resources[0]?.configEntries.find((e) => e.configName === 'min.insync.replicas');
      return { replicationFactor: replicas, minInsyncReplicas: Number(entry?.configValue ?? 1) };
    },
    async offsets(): Promise<TopicOffsets> {
      const a = await connectedAdmin();
      const all = await a.fetchTopicOffsets(topic);
      const p0 = all.find((p) => p.partition === 0);
      if (!p0) throw new Error(`kafka: topic ${topic} has no partition 0`);
      return { low: Number(p0.low), high: Number(p0.high) };
    },
    async readAt(offset, timeoutMs) {
      // kafkajs has no group-less fetch: a throwaway group member that never commits reads one message.
      const consumer = kafka.consumer({
        groupId: `eggmesh-peek-${randomUUID()}`,
        allowAutoTopicCreation: false,
        maxWaitTimeInMs: 200,
        retry: RETRY,
      });
      await consumer.connect();
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        let found: (m: IncomingMessage | null) => void = () => undefined;
        const result = new Promise<IncomingMessage | null>((resolve) => {
          found = resolve;
        });
        await consumer.run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            const message = batch.messages.find((m) => Number(m.offset) >= offset);
            if (message)
              found({ offset: Number(message.offset), value: message.value?.toString('utf8') ?? '' });
          },
        });
        consumer.seek({ topic, partition: 0, offset: String(offset) });
        const timer = setTimeout(() => found(null), timeoutMs);
        const message = await result;
        clearTimeout(timer);
        if (message === null)
          throw new Error(`kafka: no answer reading offset ${offset} of ${topic} within ${timeoutMs} ms`);
        return message.offset === offset ? message : null;
      } finally {
        await consumer.disconnect().catch(() => undefined);
      }
    },
    async producer(): Promise<TopicProducer> {
      const producer = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: RETRY,
      });
      await producer.connect();
      const handle = {
        async send(messages: readonly OutgoingMessage[]) {
          if (messages.length === 0) return;
          await producer.send({
            topic,
            acks: -1,
            messages: messages.map((m) => ({ key: m.key, value: m.value })),
          });
        },
        async close() {
          open.delete(handle);
          await producer.disconnect();
        },
      };
      open.add(handle);
      return handle;
    },
    consumer(groupId) {
      return partitionConsumer(kafka, connectedAdmin, topic, groupId, open);
    },
    async close() {
      await Promise.all([...open].map((c) => c.close().catch(() => undefined)));
      if (admin) await (await admin.catch(() => undefined))?.disconnect();
      admin = undefined;
    },
  };
}

function partitionConsumer(
  kafka: Kafka,
  connectedAdmin: () => Promise<Admin>,
  topic: string,
  groupId: string,
  open: Set<{ close(): Promise<void> }>,
): PartitionConsumer {
  let consumer: Consumer | undefined;
  const onPartition0 = [{ topic, partitions: [0] }];
  const handle: PartitionConsumer = {
    async committed() {
      const a = await connectedAdmin();
      const answer = await a.fetchOffsets({ groupId, topics: [topic] });
      const offset = answer[0]?.partitions.find((p) => p.partition === 0)?.offset;
      return offset === undefined || Number(offset) < 0 ? null : Number(offset);
    },
    async start(offset, onBatch: (batch: FetchedBatch) => void) {
      const c = kafka.consumer({
        groupId,
        allowAutoTopicCreation: false,
        maxWaitTimeInMs: 500,
        // A member that died without leaving (SIGKILL) holds its partition until its session expires:
        // 10 s instead of kafkajs' 30 s, so a restarted projector resumes sooner. Heartbeats go every
        // second; nothing slow runs inside the fetch loop (batches only land in memory).
        sessionTimeout: 10_000,
        rebalanceTimeout: 10_000,
        heartbeatInterval: 1000,
        retry: RETRY,
      });
      consumer = c;
      open.add(handle);
      await c.connect();
      await c.subscribe({ topic, fromBeginning: true });
      await c.run({
        autoCommit: false,
        eachBatchAutoResolve: true,
        eachBatch: async ({ batch }) => {
          if (batch.partition !== 0) return;
          onBatch({
            highWatermark: Number(batch.highWatermark),
            messages: batch.messages.map((m) => ({
              offset: Number(m.offset),
              value: m.value?.toString('utf8') ?? '',
            })),
          });
        },
      });
      c.seek({ topic, partition: 0, offset: String(offset) });
    },
    seek(offset) {
      consumer?.seek({ topic, partition: 0, offset: String(offset) });
    },
    pause() {
      consumer?.pause(onPartition0);
    },
    resume() {
      consumer?.resume(onPartition0);
    },
    async commit(nextOffset) {
      if (!consumer) throw new Error('kafka: the consumer is not started');
      await consumer.commitOffsets([{ topic, partition: 0, offset: String(nextOffset) }]);
    },
    async close() {
      open.delete(handle);
      const c = consumer;
      consumer = undefined;
      await c?.disconnect();
    },
  };
  return handle;
}
