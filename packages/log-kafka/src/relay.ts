import { setTimeout as sleep } from 'node:timers/promises';
import type { LogEntry } from '@eggmesh/store';
import { type KafkaClient, survivesBrokerLoss, type TopicDurability, type TopicProducer } from './client.js';
import { decodeEntry, encodeEntry } from './codec.js';

/** What the relay reads: the primary's event log (the EventLog port, as a consumer sees it). */
export interface RelaySource {
  read(after: number, limit: number): Promise<LogEntry[]>;
  head(): Promise<number>;
  waitBeyond(after: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
}

export interface RelayOptions {
  readonly source: RelaySource;
  readonly client: KafkaClient;
  /** Entries per produce request (default 1000). */
  readonly batchSize?: number;
  /** Longest idle wait before looking at the primary's log again (default 1000 ms). */
  readonly idleWaitMs?: number;
  /** Pause after a failure before trying again (default 1000 ms). */
  readonly retryMs?: number;
  readonly onLog?: (level: 'error' | 'warn' | 'info', message: string) => void;
  /**
   * The least replication factor and `min.insync.replicas` the topic must have (default 1 and 1, a
   * single broker). The relay refuses a topic with less: it publishes nothing, stays not ready and
   * says why (`refusal`), checking again at every retry.
   */
  readonly durability?: TopicDurability;
}

export interface RelayLag {
  /** The primary's log head. */
  readonly head: number;
  /** The last position known to be in the topic (null before the broker answered once). */
  readonly published: number | null;
  readonly entries: number;
  /** Age of the oldest entry not yet published (0 when none). */
  readonly ms: number;
}

/**
 * Publishes the primary's log to the topic in position order, one produce request per batch, through
 * the idempotent producer with `acks: -1`.
 *
 * What is published is recorded by the topic itself: on start, and again after every failure, the
 * relay reads the topic's last message and resumes after its position. So a restart neither skips
 * nor reorders; a batch the broker wrote but never acknowledged is not sent twice either (its last
 * message is the topic's last one). A duplicate stays possible only in rarer cases (the topic's
 * messages all deleted by retention: the relay then starts over from the first position), and the
 * consumer drops duplicates by position.
 */
export class Relay {
  publishedTotal = 0;
  failures = 0;
  private published: number | null = null;
  private producer: TopicProducer | undefined;
  private readonly batchSize: number;
  private readonly idleWaitMs: number;
  private readonly retryMs: number;
  private readonly say: (level: 'error' | 'warn' | 'info', message: string) => void;
  private ready = false;
  private outage = false;
  private refused: string | null = null;
  private durabilityTold = false;

  constructor(private readonly options: RelayOptions) {
    this.batchSize = options.batchSize ?? 1000;
    this.idleWaitMs = options.idleWaitMs ?? 1000;
    this.retryMs = options.retryMs ?? 1000;
    this.say = options.onLog ?? (() => undefined);
  }

  /** True while the broker answers (the last attempt to connect or publish succeeded). */
  get isReady(): boolean {
    return this.ready;
  }

  /** Why the relay refuses the topic (it would lose acknowledged entries with one broker); null when it does not. */
  get refusal(): string | null {
    return this.refused;
  }

  /** The last position known to be in the topic; null before the broker answered. */
  get position(): number | null {
    return this.published;
  }

  /** The position of the topic's last message (0 for an empty topic). */
  async lastPublished(): Promise<number> {
    const { client } = this.options;
    const { low, high } = await client.offsets();
    if (high === 0) return 0;
    if (high <= low) {
      this.say(
        'warn',
        `kafka: topic ${client.topic} holds no message (retention deleted them all); publishing from the first position again (duplicates are skipped by consumers)`,
      );
      return 0;
    }
    const last = await client.readAt(high - 1, 10_000);
    if (!last) throw new Error(`kafka: cannot read the last message (offset ${high - 1}) of ${client.topic}`);
    return decodeEntry(last.value).position;
  }

  private async connect(): Promise<void> {
    const { client } = this.options;
    const partitions = await client.ensureTopic(1);
    if (partitions !== 1) {
      this.say(
        'warn',
        `kafka: topic ${client.topic} has ${partitions} partitions; eggmesh publishes keyed by entity, but consumers need exactly one`,
      );
    }
    const has = await client.durability();
    const wanted = this.options.durability ?? { replicationFactor: 1, minInsyncReplicas: 1 };
    if (
      has &&
      (has.replicationFactor < wanted.replicationFactor || has.minInsyncReplicas < wanted.minInsyncReplicas)
    ) {
      this.refused = `topic ${client.topic} has replication factor ${has.replicationFactor} and min.insync.replicas ${has.minInsyncReplicas}, less than the ${wanted.replicationFactor} and ${wanted.minInsyncReplicas} configured (EGGMESH_KAFKA_REPLICATION_FACTOR, EGGMESH_KAFKA_MIN_INSYNC_REPLICAS)${survivesBrokerLoss(has) ? '' : ': an acknowledged entry would be lost with one broker'}; raise the topic's (kafka-topics --alter, kafka-configs) or lower the settings`;
      throw new Error(`kafka: refusing to publish: ${this.refused}`);
    }
    this.refused = null;
    if (has && !survivesBrokerLoss(has) && !this.durabilityTold) {
      this.durabilityTold = true;
      this.say(
        'warn',
        `kafka: topic ${client.topic} has replication factor ${has.replicationFactor} and min.insync.replicas ${has.minInsyncReplicas}: an acknowledged entry is lost with its broker (fine for a single broker)`,
      );
    }
    this.producer = await client.producer();
    this.published = await this.lastPublished();
    this.ready = true;
    this.say(
      'info',
      `${this.outage ? 'kafka reachable again' : 'kafka reachable'}: topic ${client.topic} holds the log up to position ${this.published}; publishing from there`,
    );
    this.outage = false;
  }

  /** One step: connect if needed, publish one batch. Answers how many entries it published. */
  async step(): Promise<number> {
    if (!this.producer || this.published === null) await this.connect();
    const after = this.published ?? 0;
    const entries = await this.options.source.read(after, this.batchSize);
    if (entries.length === 0) return 0;
    await this.producer?.send(entries.map(encodeEntry));
    this.published = entries[entries.length - 1]!.position;
    this.publishedTotal += entries.length;
    return entries.length;
  }

  /** Publishes until `signal` aborts; waits on the primary's log when idle, retries after failures. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const published = await this.step();
        if (published === 0 && this.published !== null) {
          await this.options.source.waitBeyond(this.published, this.idleWaitMs, signal);
        }
      } catch (error) {
        if (signal.aborted) break;
        this.failures += 1;
        const message = error instanceof Error ? error.message : String(error);
        this.say(
          this.outage ? 'info' : 'error',
          `kafka: publishing failed (${message}); not ready, retrying every ${this.retryMs} ms from the topic's last message`,
        );
        this.outage = true;
        this.ready = false;
        // Start over from what the topic holds: the failed batch may or may not be in it.
        this.published = null;
        const producer = this.producer;
        this.producer = undefined;
        await producer?.close().catch(() => undefined);
        await sleep(this.retryMs, undefined, { signal }).catch(() => undefined);
      }
    }
    const producer = this.producer;
    this.producer = undefined;
    await producer?.close().catch(() => undefined);
  }

  /** Entries of the primary's log not yet in the topic, and the age of the oldest of them. */
  async lag(now = Date.now()): Promise<RelayLag> {
    const head = await this.options.source.head();
    const published = this.published;
    const from = published ?? 0;
    const entries = Math.max(0, head - from);
    let ms = 0;
    if (entries > 0) {
      const [oldest] = await this.options.source.read(from, 1);
      if (oldest) ms = Math.max(0, now - oldest.createdAt);
    }
    return { head, published, entries, ms };
  }
}
