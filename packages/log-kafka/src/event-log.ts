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

/** The consumer group of the projector on `topic` (one group per topic). */
export const projectorGroup = (topic: string): string => `eggmesh-projector.${topic}`;

/** Longest a read waits for the entries a rewind fetches again. */
const REWIND_WAIT_MS = 10_000;

interface Held {
  readonly entry: LogEntry;
  readonly offset: number;
}

/**
 * The event-log port over a Kafka topic the relay feeds (one partition, messages in log order, maybe
 * a duplicate after a relay crash). A consumer-group member fetches into a window of entries in
 * memory; a message whose position is not beyond the last one taken is dropped (de-duplication by
 * position), so a consumer sees each position once and in order. `read(after)` answers from the
 * window and may be repeated; the window keeps up to `bufferEntries` entries already read (older ones
 * are let go) and fetching pauses while `bufferEntries` entries wait unread.
 *
 * Offsets: the group's offset is committed by `acknowledge(position)` only, which the projector calls
 * after its own checkpoint committed. A restart resumes one message before the committed offset (to
 * learn the acknowledged position) and skips what the consumer's checkpoint already holds. Asked for
 * entries older than the window (a consumer whose checkpoint went back), a read rewinds to the oldest
 * offset the topic retains and waits for them, and fails when retention has already deleted some of
 * them: rebuild from the primary's log then (docs/architecture.md).
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

  /** The window: fetched entries in position order (strictly increasing). */
  private held: Held[] = [];
  /** The newest entry let go from the front of the window (for acknowledging positions before it). */
  private letGo: Held | null = null;
  /** The highest position a read has answered (entries up to it count as read). */
  private readUpTo = 0;
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
  private rewindFirst = false;
  private failure: Error | null = null;
  private paused = false;
  private committedOffset = -1;
  private waiters = new Set<() => void>();
  private isConnected = false;
  private lastHighWatermark = 0;
  /** The topic's high watermark when the current rewind began. */
  private rewindHigh = 0;

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
          this.failure = new Error(
            `kafka: topic ${this.client.topic} has ${partitions} partitions; eggmesh's log topic must have exactly one (total log order)`,
          );
          this.say('error', this.failure.message);
          return;
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
      if (this.rewindFirst && this.rewinding !== null) {
        this.rewindFirst = false;
        const asked = this.rewinding;
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
    if (this.unread() >= this.capacity && !this.paused) {
      this.paused = true;
      this.consumer.pause();
    }
    this.wake();
  }

  /** Index of the first held entry with a position beyond `after`. */
  private indexAfter(after: number): number {
    let lo = 0;
    let hi = this.held.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.held[mid]!.entry.position <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private unread(): number {
    return this.held.length - this.indexAfter(this.readUpTo);
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
    if (this.rewinding !== null || (this.floor !== null && after < this.floor)) await this.rewind(after);
    if (this.failure) throw this.failure;
    const from = this.indexAfter(after);
    const page = this.held.slice(from, from + limit);
    const last = page[page.length - 1];
    if (last && last.entry.position > this.readUpTo) this.readUpTo = last.entry.position;
    // Let go of what was read beyond the window's share of read entries.
    const read = this.indexAfter(this.readUpTo);
    const extra = read - this.capacity;
    if (extra > 0) {
      this.letGo = this.held[extra - 1]!;
      this.floor = this.letGo.entry.position;
      this.held = this.held.slice(extra);
    }
    if (this.paused && this.unread() < this.capacity / 2) {
      this.paused = false;
      this.consumer.resume();
    }
    return page.map((h) => h.entry);
  }

  /**
   * Fetches again from the topic's oldest offset, for the entries after `after`, and waits (up to
   * `REWIND_WAIT_MS`) until they arrive or the fetcher reached the end of the topic.
   */
  private async rewind(after: number): Promise<void> {
    if (this.rewinding === null || after < this.rewinding) {
      const { low, high } = await this.client.offsets();
      this.say('info', `kafka: rewinding to offset ${low} for the entries after position ${after}`);
      this.held = [];
      this.letGo = null;
      this.highest = after;
      this.floor = after;
      this.readUpTo = after;
      this.lastOffset = low - 1;
      this.rewinding = after;
      this.rewindFirst = true;
      this.rewindHigh = high;
      this.expectedOffset = low;
      if (this.paused) {
        this.paused = false;
        this.consumer.resume();
      }
      this.consumer.seek(low);
    }
    const deadline = Date.now() + REWIND_WAIT_MS;
    while (
      this.rewinding !== null &&
      !this.failure &&
      this.lastOffset < this.rewindHigh - 1 &&
      Date.now() < deadline
    ) {
      await this.nextFetch(deadline - Date.now());
    }
    if (this.lastOffset >= this.rewindHigh - 1) this.rewinding = null;
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
    const at = this.indexAfter(position);
    const last =
      at > 0
        ? this.held[at - 1]
        : this.letGo !== null && this.letGo.entry.position <= position
          ? this.letGo
          : undefined;
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
