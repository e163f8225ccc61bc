/**
 * The few things eggmesh asks of a Kafka client. Everything else in this package is written against
 * these interfaces, so the client library (kafkajs today, unmaintained since 2023) can be swapped for a
 * maintained one by writing one more implementation of `KafkaClient`.
 *
 * eggmesh's topic has ONE partition (see docs/architecture.md, "The event log on Kafka"): a consumer
 * reads partition 0, in offset order.
 */

/** A message to publish. */
export interface OutgoingMessage {
  readonly key: string;
  readonly value: string;
}

/** A fetched message of partition 0. */
export interface IncomingMessage {
  readonly offset: number;
  readonly value: string;
}

export interface FetchedBatch {
  /** In offset order. */
  readonly messages: readonly IncomingMessage[];
  /** The partition's high watermark when fetched (offset of the next message to be written). */
  readonly highWatermark: number;
}

export interface TopicOffsets {
  /** Earliest offset still held (retention may have deleted what came before). */
  readonly low: number;
  /** Offset the next message will get; `high - 1` is the newest message. */
  readonly high: number;
}

export interface TopicProducer {
  /**
   * Appends the messages to partition 0 in this order, acknowledged by every in-sync replica
   * (`acks: -1`), through an idempotent producer (a retried send is written once). Rejects when the
   * broker did not acknowledge them; some of them may have been written anyway.
   */
  send(messages: readonly OutgoingMessage[]): Promise<void>;
  close(): Promise<void>;
}

/** A group member reading partition 0 of one topic, committing offsets only when told to. */
export interface PartitionConsumer {
  /** The group's committed offset (the next offset to read), or null when it has none. */
  committed(): Promise<number | null>;
  /** Joins the group and fetches from `offset` on; `onBatch` receives every fetched batch in order. */
  start(offset: number, onBatch: (batch: FetchedBatch) => void): Promise<void>;
  /** Fetch from `offset` next (after a batch in flight, which may still arrive). */
  seek(offset: number): void;
  /** Stops fetching until `resume()`. */
  pause(): void;
  resume(): void;
  /** Commits `nextOffset` (one past the last message applied) for the group. */
  commit(nextOffset: number): Promise<void>;
  close(): Promise<void>;
}

/** How many copies of the topic the brokers keep, and how many must have a message to acknowledge it. */
export interface TopicDurability {
  /** Replicas of each partition (brokers holding a copy). */
  readonly replicationFactor: number;
  /** `min.insync.replicas`: with `acks: -1`, a message is acknowledged once this many replicas have it. */
  readonly minInsyncReplicas: number;
}

/**
 * Whether an acknowledged message survives the loss of any one broker: it is on at least two replicas
 * when acknowledged (`min.insync.replicas` ≥ 2, so also a replication factor ≥ 2).
 */
export function survivesBrokerLoss(durability: TopicDurability): boolean {
  return durability.minInsyncReplicas >= 2 && durability.replicationFactor >= durability.minInsyncReplicas;
}

/** One connection to a Kafka cluster for one topic. */
export interface KafkaClient {
  readonly topic: string;
  /**
   * Creates the topic with `partitions` partitions if it does not exist (with the client's
   * `durability`); answers its partition count.
   */
  ensureTopic(partitions: number): Promise<number>;
  /** The topic's replication factor and `min.insync.replicas`; null when it does not exist. */
  durability(): Promise<TopicDurability | null>;
  /** Partition count of the topic, or 0 when it does not exist. */
  partitions(): Promise<number>;
  offsets(): Promise<TopicOffsets>;
  /** The message at `offset` of partition 0 (null if the topic does not hold it). */
  readAt(offset: number, timeoutMs: number): Promise<IncomingMessage | null>;
  producer(): Promise<TopicProducer>;
  consumer(groupId: string): PartitionConsumer;
  close(): Promise<void>;
}

export interface KafkaClientOptions {
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: readonly string[];
  readonly topic: string;
  /** How `ensureTopic` creates the topic (default: replication factor 1, `min.insync.replicas` 1). */
  readonly durability?: TopicDurability;
  /** A name for the broker's logs. */
  readonly clientId?: string;
  /** Receives the client's own warnings and errors (already formatted); silent by default. */
  readonly onLog?: (level: 'error' | 'warn', message: string) => void;
}
