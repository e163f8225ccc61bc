import { setTimeout as sleep } from 'node:timers/promises';
import type { LogEntry } from '@eggmesh/store';
import type { FetchedBatch, KafkaClient, PartitionConsumer } from './client.js';
import { decodeEntry } from './codec.js';

export interface KafkaEventLogOptions {
  readonly client: KafkaClient;
  /** The consumer group; its committed offsets say where a restart resumes. */
  readonly groupId: string;
  /** Fetched entries held in memory before fetching pauses (default 20 000). */
  readonly bufferEntries?: number;
  /** Pause between attempts to reach the broker (default 1000 ms). */
  readonly retryMs?: number;
  readonly onLog?: (level: 'error' | 'warn' | 'info', message: string) => void;
}

interface Held {
  readonly entry: LogEntry;
  readonly offset: number;
}

/**
 * The event-log port over a Kafka topic the relay feeds (one partition, messages in log order, maybe
 * a duplicate after a relay crash). A consumer-group member fetches into a bounded buffer;
 * `read(after)` answers from it, dropping every entry whose position is not beyond the last one held
 * (de-duplication by position), so a consumer sees each position once and in order.
 *
 * Offsets: the group's offset is committed by `acknowledge(position)` only, which the projector calls
 * after its own checkpoint committed. A restart resumes one message before the committed offset (to
 * learn the acknowledged position) and skips what the consumer's checkpoint already holds. Asked for
 * entries before what it holds (a consumer whose checkpoint went back), it rewinds to the oldest
 * offset the topic retains, and fails reads when retention has already deleted some of them: rebuild
 * from the primary's log then (docs/architecture.md).
 *
 * The broker may be down at start or later: the log keeps trying in the background (`connected`
 * says whether it is), reads answer what is held, and nothing is lost, since the topic holds it.
 */
export class KafkaEventLog {
  private readonly client: KafkaClient;
  private readonly consumer: PartitionConsumer;
  private readonly capacity: number;
  private readonly retryMs: number;
  private readonly say: (level: 'error' | 'warn' | 'info', message: string) => void;
  private readonly stop = new AbortController();
  private readonly started: Promise<void>;

  /** Fetched entries not yet passed by a read, in position order (strictly increasing). */
  private held: Held[] = [];
  /** Entries passed by reads, waiting for their acknowledgement (for the offset to commit). */
  private passed: Held[] = [];
  /** Highest position taken into `held` (dedup threshold). */
  private highest = 0;
  /** Offset of the last message taken in (position-duplicates included). */
  private lastOffset = -1;
  /** The next offset we accept; a batch starting elsewhere is stale (fetched before a seek). */
  private expectedOffset: number | null = null;
  /** Every entry with a position beyond this one is held or yet to come; null before the first fetch. */
  private floor: number | null = null;
  /** Set while rewinding: the `after` asked for, checked against the first message that comes back. */
  private rewinding: number | null = null;
  private failure: Error | null = null;
  private paused = false;
  private committedOffset = -1;
  private waiters = new Set<() => void>();
  private isConnected = false;
  private lastHighWatermark = 0;

  constructor(options: KafkaEventLogOptions) {
    this.client = options.client;
    this.consumer = options.client.consumer(options.groupId);
    this.capacity = options.bufferEntries ?? 20_000;
    this.retryMs = options.retryMs ?? 1000;
    this.say = options.onLog ?? (() => undefined);
    this.started = this.connect();
  }

  /** True once the consumer has joined its group (the broker was reachable). */
  get connected(): boolean {
    return this.isConnected;
  }

  /** Resolves once connected (or closed). */
  whenConnected(): Promise<void> {
    return this.started;
  }

  private async connect(): Promise<void> {
    let told = false;
    while (!this.stop.signal.aborted) {
      try {
        const partitions = await this.client.ensureTopic(1);
        if (partitions !== 1) {
          throw new Error(
            `topic ${this.client.topic} has ${partitions} partitions; eggmesh's log topic must have exactly one (total log order)`,
          );
        }
        const committed = await this.consumer.committed();
        let from: number;
        if (committed !== null && committed > 0) {
          // One message back: the acknowledged one, whose position tells where we stand.
          from = committed - 1;
          this.committedOffset = committed;
        } else {
          from = (await this.client.offsets()).low;
        }
        this.expectedOffset = from;
        await this.consumer.start(from, (batch) => this.take(batch));
        this.isConnected = true;
        if (told) this.say('info', `kafka: connected to topic ${this.client.topic}`);
        return;
      } catch (error) {
        if (this.stop.signal.aborted) return;
        if (String(error).includes('partitions; eggmesh')) {
          this.failure = error instanceof Error ? error : new Error(String(error));
          this.say('error', `kafka: ${this.failure.message}`);
          return;
        }
        this.say(
          told ? 'info' : 'warn',
          `kafka: cannot reach the broker for topic ${this.client.topic} (${error instanceof Error ? error.message : String(error)}); retrying every ${this.retryMs} ms`,
        );
        told = true;
        await this.consumer.close().catch(() => undefined);
        await sleep(this.retryMs, undefined, { signal: this.stop.signal }).catch(() => undefined);
      }
    }
  }

  private take(batch: FetchedBatch): void {
    this.lastHighWatermark = Math.max(this.lastHighWatermark, batch.highWatermark);
    for (const message of batch.messages) {
      if (this.expectedOffset !== null && message.offset !== this.expectedOffset) {
        if (message.offset < this.expectedOffset) continue; // fetched again after a restart: seen
        // A batch fetched before our seek took effect: ask again from where we mean to be.
        this.consumer.seek(this.expectedOffset);
        void this.checkRetained(this.expectedOffset);
        return;
      }
      this.expectedOffset = message.offset + 1;
      this.lastOffset = message.offset;
      let entry: LogEntry;
      try {
        entry = decodeEntry(message.value);
      } catch (error) {
        this.failure = error instanceof Error ? error : new Error(String(error));
        this.say('error', `kafka: offset ${message.offset}: ${this.failure.message}`);
        continue;
      }
      if (this.floor === null) this.floor = entry.position - 1;
      if (this.rewinding !== null) {
        const asked = this.rewinding;
        this.rewinding = null;
        if (message.offset > 0 && entry.position > asked + 1) {
          this.failure = new Error(
            `kafka: topic ${this.client.topic} no longer holds the entries after position ${asked} (its oldest message has position ${entry.position}): rebuild from the primary's log`,
          );
          this.say('error', this.failure.message);
        }
      }
      if (entry.position <= this.highest) continue; // a duplicate the relay wrote after a crash
      this.highest = entry.position;
      this.held.push({ entry, offset: message.offset });
    }
    if (this.held.length >= this.capacity && !this.paused) {
      this.paused = true;
      this.consumer.pause();
    }
    this.wake();
  }

  /** The offset we wait for is older than the topic's oldest: accept the gap from there (a rewind checks it). */
  private async checkRetained(offset: number): Promise<void> {
    try {
      const { low } = await this.client.offsets();
      if (low > offset && this.expectedOffset === offset) {
        this.expectedOffset = low;
        this.consumer.seek(low);
      }
    } catch {
      // the next batch asks again
    }
  }

  private wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const w of waiters) w();
  }

  async read(after: number, limit: number): Promise<LogEntry[]> {
    if (this.failure) throw this.failure;
    if (this.rewinding !== null) return [];
    if (this.floor !== null && after < this.floor) {
      await this.rewind(after);
      return [];
    }
    let drop = 0;
    while (drop < this.held.length && this.held[drop]!.entry.position <= after) drop += 1;
    if (drop > 0) {
      this.passed.push(...this.held.slice(0, drop));
      this.held = this.held.slice(drop);
      // Bounded: acknowledgements far behind only commit less, never wrongly.
      if (this.passed.length > 4 * this.capacity) this.passed = this.passed.slice(-2 * this.capacity);
    }
    if (this.paused && this.held.length < this.capacity / 2) {
      this.paused = false;
      this.consumer.resume();
    }
    return this.held.slice(0, limit).map((h) => h.entry);
  }

  private async rewind(after: number): Promise<void> {
    const { low } = await this.client.offsets();
    this.say('info', `kafka: rewinding to offset ${low} for the entries after position ${after}`);
    this.held = [];
    this.highest = after;
    this.floor = after;
    this.rewinding = after;
    this.expectedOffset = low;
    if (this.paused) {
      this.paused = false;
      this.consumer.resume();
    }
    this.consumer.seek(low);
  }

  /**
   * The newest position held, plus the messages the broker holds beyond the last one fetched (an
   * estimate past what is fetched: exact when the relay wrote no duplicate). Waits up to a second
   * for the fetcher to catch up with the broker first.
   */
  async head(): Promise<number> {
    let high: number;
    try {
      high = (await this.client.offsets()).high;
    } catch {
      return this.highest;
    }
    const deadline = Date.now() + 1000;
    while (this.lastOffset < high - 1 && !this.paused && this.isConnected && Date.now() < deadline) {
      await this.nextFetch(deadline - Date.now());
    }
    if (this.lastOffset < 0) return this.highest;
    return this.highest + Math.max(0, high - 1 - this.lastOffset);
  }

  private nextFetch(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(onFetch);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onFetch = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      this.waiters.add(onFetch);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async waitBeyond(after: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.failure) return true; // the next read says what is wrong
      if (this.highest > after || (this.floor !== null && after < this.floor)) return true;
      if (signal?.aborted) return false;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      if (!(await this.nextFetch(left, signal)) && (signal?.aborted || Date.now() >= deadline)) return false;
    }
  }

  /**
   * Commits the group's offset past the newest entry at or before `position` (the consumer's
   * checkpoint committed). Failures are logged, not thrown: a later acknowledgement commits further,
   * and an uncommitted offset only means entries fetched again and skipped by position.
   */
  async acknowledge(position: number): Promise<void> {
    let last: Held | undefined;
    let cut = 0;
    while (cut < this.passed.length && this.passed[cut]!.entry.position <= position) {
      last = this.passed[cut];
      cut += 1;
    }
    this.passed = this.passed.slice(cut);
    let heldCut = 0;
    while (heldCut < this.held.length && this.held[heldCut]!.entry.position <= position) {
      last = this.held[heldCut];
      heldCut += 1;
    }
    if (heldCut > 0) this.held = this.held.slice(heldCut);
    if (!last || last.offset + 1 <= this.committedOffset) return;
    try {
      await this.consumer.commit(last.offset + 1);
      this.committedOffset = last.offset + 1;
    } catch (error) {
      this.say(
        'warn',
        `kafka: committing offset ${last.offset + 1} failed (${String(error)}); a later acknowledgement retries`,
      );
    }
  }

  /** Kafka-side numbers for /metrics. */
  stats(): { readonly committedOffset: number; readonly highWatermark: number; readonly held: number } {
    return {
      committedOffset: this.committedOffset,
      highWatermark: this.lastHighWatermark,
      held: this.held.length,
    };
  }

  async close(): Promise<void> {
    this.stop.abort();
    this.wake();
    await this.started.catch(() => undefined);
    await this.consumer.close().catch(() => undefined);
  }
}
