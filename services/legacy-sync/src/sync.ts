import { type Consumer, Kafka, logLevel, type Producer } from 'kafkajs';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import {
  keyOf,
  legacyId,
  type Mapped,
  mapRow,
  type Row,
  type SourceMapping,
  type TableMapping,
  Unmappable,
} from './mapping.js';
import { changeTopic } from './sources.js';
import { SyncState } from './state.js';

export interface LegacySyncOptions {
  readonly mapping: SourceMapping;
  /** Kafka bootstrap address(es), comma-separated. */
  readonly brokers: string;
  /** Debezium's topic prefix: change topics are `<prefix>.<source>.<table>`. */
  readonly topicPrefix: string;
  /** The write-api's base URL: clean records go through its REST API (validation, event log, auth). */
  readonly writeUrl: string;
  /** A bearer token for the write-api when it demands one (EGGMESH_AUTH=jwt). */
  readonly writeToken?: string;
  /** The SQLite file of the layer's state (applied ids, parked children, dead letters). */
  readonly stateFile: string;
  readonly groupId: string;
  /** Where unmappable rows go, with their reason. */
  readonly deadLetterTopic: string;
  /** How long a child waits for its parent before it dead-letters as "missing parent". */
  readonly parkTtlMs: number;
  readonly clock?: () => number;
  /** Where the layer's metrics go (the service's registry); default a registry of its own. */
  readonly registry?: Registry;
}

export interface SyncStatus {
  /** True while the consumer runs (false before start, after stop, or after a crash it gave up on). */
  readonly running: boolean;
  readonly applied: number;
  readonly parked: number;
  readonly deadLettered: number;
  readonly deadLetters: readonly { table: string; key: string; reason: string }[];
}

interface Change {
  readonly op: 'c' | 'r' | 'u' | 'd';
  readonly before: Row | null;
  readonly after: Row | null;
  readonly source?: { readonly ts_ms?: number };
}

/** The one place that turns a write-api answer into "applied" or a reason. */
class WriteRefused extends Error {}

/**
 * The anti-corruption layer: consumes the change topics of one source, maps each row through the
 * source's mapping table and writes the clean record through the write-api. A child whose parents
 * have not been applied yet is parked (SQLite) and applied when the last of them lands; an unknown
 * code or an impossible row is dead-lettered with its reason. The offset of a change is committed
 * only after it was applied, parked or dead-lettered, so a crash at any moment replays at most the
 * changes in flight, which the deterministic ids make harmless.
 */
export class LegacySync {
  readonly registry: Registry;
  readonly #options: LegacySyncOptions;
  readonly #state: SyncState;
  readonly #kafka: Kafka;
  readonly #consumer: Consumer;
  readonly #producer: Producer;
  readonly #byTopic = new Map<string, TableMapping>();
  readonly #byTable = new Map<string, TableMapping>();
  readonly #clock: () => number;
  readonly #applied: Counter;
  readonly #parkedTotal: Counter;
  readonly #dead: Counter;
  readonly #ignored: Counter;
  readonly #lagSeconds: Histogram;
  readonly #lagEntries: Gauge;
  #appliedCount = 0;
  #running = false;
  #expiry: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();

  constructor(options: LegacySyncOptions) {
    this.#options = options;
    this.registry = options.registry ?? new Registry();
    this.#clock = options.clock ?? Date.now;
    this.#state = new SyncState(options.stateFile);
    this.#kafka = new Kafka({
      clientId: `eggmesh-legacy-sync-${options.mapping.source}`,
      brokers: options.brokers.split(','),
      logLevel: logLevel.NOTHING,
    });
    this.#consumer = this.#kafka.consumer({ groupId: options.groupId, allowAutoTopicCreation: false });
    this.#producer = this.#kafka.producer({
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    for (const table of options.mapping.tables) {
      this.#byTopic.set(
        changeTopic(options.topicPrefix, options.mapping.source as never, table.table),
        table,
      );
      this.#byTable.set(table.table, table);
    }
    const registers = [this.registry];
    this.#applied = new Counter({
      name: 'eggmesh_legacy_applied_total',
      help: 'Clean writes acknowledged by the write-api',
      labelNames: ['source', 'entity', 'op'],
      registers,
    });
    this.#parkedTotal = new Counter({
      name: 'eggmesh_legacy_parked_total',
      help: 'Children parked until a parent lands',
      labelNames: ['source'],
      registers,
    });
    this.#dead = new Counter({
      name: 'eggmesh_legacy_dead_lettered_total',
      help: 'Rows sent to the dead-letter topic',
      labelNames: ['source', 'table'],
      registers,
    });
    this.#ignored = new Counter({
      name: 'eggmesh_legacy_ignored_total',
      help: 'Changes with nothing to do: another client, a delete of an id never applied',
      labelNames: ['source', 'reason'],
      registers,
    });
    this.#lagSeconds = new Histogram({
      name: 'eggmesh_legacy_lag_seconds',
      help: 'Seconds from the legacy commit to the acknowledged clean write',
      labelNames: ['topic'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers,
    });
    this.#lagEntries = new Gauge({
      name: 'eggmesh_legacy_lag_entries',
      help: 'Changes on a topic not yet consumed',
      labelNames: ['topic'],
      registers,
    });
    const state = this.#state;
    new Gauge({
      name: 'eggmesh_legacy_parked_now',
      help: 'Children parked right now',
      registers,
      collect() {
        this.set(state.parkedCount());
      },
    });
  }

  /** Applied, parked and dead-lettered counts, and the dead letters with their reasons (for /ready). */
  status(): SyncStatus {
    const dead = this.#state.deadLetters();
    return {
      running: this.#running,
      applied: this.#appliedCount,
      parked: this.#state.parkedCount(),
      deadLettered: dead.length,
      deadLetters: dead.map(({ table, key, reason }) => ({ table, key, reason })),
    };
  }

  /** The legacy row a clean id came from (`source/client/table/key`), if the layer applied it. */
  traceBack(id: string): string | undefined {
    return this.#state.legacyKey(id);
  }

  async start(): Promise<void> {
    await this.#producer.connect();
    const admin = this.#kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      if (!existing.has(this.#options.deadLetterTopic)) {
        await admin.createTopics({
          topics: [{ topic: this.#options.deadLetterTopic, numPartitions: 1, replicationFactor: -1 }],
        });
      }
      // Debezium creates a table's topic with its first change; create the rest so every table is subscribed.
      const missing = [...this.#byTopic.keys()].filter((topic) => !existing.has(topic));
      if (missing.length > 0) {
        await admin.createTopics({
          topics: missing.map((topic) => ({ topic, numPartitions: 1, replicationFactor: -1 })),
        });
      }
      // A topic Debezium created a moment ago (after the listing above) may have no leader yet, and a
      // subscription to it then fails (UNKNOWN_TOPIC_OR_PARTITION): subscribe once every topic has one.
      const topics = [...this.#byTopic.keys()];
      const deadline = Date.now() + 60_000;
      for (;;) {
        const led = await admin.fetchTopicMetadata({ topics }).then(
          ({ topics: found }) =>
            found.length === topics.length &&
            found.every(
              (topic) => topic.partitions.length > 0 && topic.partitions.every((p) => p.leader >= 0),
            ),
          () => false,
        );
        if (led) break;
        if (Date.now() > deadline)
          throw new Error(`legacy-sync: the change topics have no leader after 60 s`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      await admin.disconnect();
    }
    // A mapping fixed since the last run applies the rows it dead-lettered.
    for (const letter of this.#state.deadLetters()) {
      const table = this.#byTable.get(letter.table);
      if (table) await this.#upsert(table, letter.client, letter.row, this.#clock(), 'retry');
    }
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topics: [...this.#byTopic.keys()], fromBeginning: true });
    await this.#consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const table = this.#byTopic.get(batch.topic);
        for (const message of batch.messages) {
          if (!isRunning() || isStale()) return;
          if (table && message.value) {
            await this.#serial(() => this.#handle(table, JSON.parse(message.value!.toString()) as Change));
          }
          resolveOffset(message.offset);
          await this.#consumer.commitOffsets([
            {
              topic: batch.topic,
              partition: batch.partition,
              offset: (BigInt(message.offset) + 1n).toString(),
            },
          ]);
          this.#lagEntries.set(
            { topic: batch.topic },
            Math.max(0, Number(batch.highWatermark) - Number(message.offset) - 1),
          );
          await heartbeat();
        }
      },
    });
    this.#running = true;
    this.#consumer.on(this.#consumer.events.CRASH, (event) => {
      if (!event.payload.restart) this.#running = false;
    });
    this.#expiry = setInterval(
      () => void this.#serial(() => this.#expire()),
      Math.min(this.#options.parkTtlMs, 5_000),
    );
    this.#expiry.unref();
  }

  async stop(): Promise<void> {
    this.#running = false;
    if (this.#expiry) clearInterval(this.#expiry);
    await this.#consumer.disconnect();
    await this.#chain;
    await this.#producer.disconnect();
    this.#state.close();
  }

  /** Topics are consumed in parallel; the state and the parked children are touched by one change at a time. */
  #serial(work: () => Promise<void>): Promise<void> {
    const next = this.#chain.then(work);
    this.#chain = next.catch(() => undefined);
    return next;
  }

  async #handle(table: TableMapping, change: Change): Promise<void> {
    const source = this.#options.mapping;
    const row = change.op === 'd' ? change.before : change.after;
    if (!row) return;
    const client = source.client ? String(row[source.client.column] ?? '').trim() : '';
    if (source.client && client !== source.client.value) {
      this.#ignored.inc({ source: source.source, reason: 'other_client' });
      return;
    }
    const legacyMs = change.source?.ts_ms ?? this.#clock();
    const deleted = change.op === 'd' || (table.deletedFlag !== undefined && row[table.deletedFlag] === true);
    if (deleted) {
      await this.#delete(table, client, row, legacyMs);
      return;
    }
    await this.#upsert(table, client, row, legacyMs, change.op);
  }

  async #delete(table: TableMapping, client: string, row: Row, legacyMs: number): Promise<void> {
    const source = this.#options.mapping;
    let key: string[];
    try {
      key = keyOf(table, row);
    } catch (error) {
      await this.#deadLetter(table, client, row, error instanceof Error ? error.message : String(error));
      return;
    }
    const id = legacyId(source.source, client, table.table, key);
    this.#state.unpark(id);
    this.#state.clearDead(table.table, client, key.join('/'));
    const response = await this.#write('DELETE', table.entity, id);
    if (response === 404) {
      this.#ignored.inc({ source: source.source, reason: 'delete_unknown' });
    } else {
      this.#applied.inc({ source: source.source, entity: table.entity, op: 'delete' });
      this.#appliedCount++;
      this.#lagSeconds.observe(
        { topic: changeTopic(this.#options.topicPrefix, source.source as never, table.table) },
        (this.#clock() - legacyMs) / 1000,
      );
    }
    this.#state.markDeleted(id);
  }

  async #upsert(table: TableMapping, client: string, row: Row, legacyMs: number, op: string): Promise<void> {
    const source = this.#options.mapping;
    let mapped: Mapped;
    try {
      mapped = mapRow(source, table, client, row);
    } catch (error) {
      if (!(error instanceof Unmappable)) throw error;
      await this.#deadLetter(table, client, row, error.message);
      return;
    }
    const key = keyOf(table, row).join('/');
    const missing = mapped.parents.filter((parent) => this.#state.applied(parent) === undefined);
    if (missing.length > 0) {
      this.#state.park({
        id: mapped.id,
        entity: table.entity,
        table: table.table,
        client,
        row: { ...row },
        waitingOn: missing,
        since: this.#clock(),
        legacyMs,
      });
      this.#parkedTotal.inc({ source: source.source });
      return;
    }
    const record: Record<string, unknown> = { ...mapped.record };
    for (const [field, [parent, parentField]] of Object.entries(mapped.inherited)) {
      record[field] = this.#state.applied(parent)?.[parentField];
    }
    try {
      await this.#put(table.entity, mapped.id, record);
    } catch (error) {
      if (!(error instanceof WriteRefused)) throw error;
      await this.#deadLetter(table, client, row, error.message);
      return;
    }
    this.#state.markApplied(
      mapped.id,
      table.entity,
      record,
      `${source.source}/${client}/${table.table}/${key}`,
    );
    this.#state.unpark(mapped.id);
    this.#state.clearDead(table.table, client, key);
    this.#applied.inc({ source: source.source, entity: table.entity, op: op === 'u' ? 'update' : 'upsert' });
    this.#appliedCount++;
    this.#lagSeconds.observe(
      { topic: changeTopic(this.#options.topicPrefix, source.source as never, table.table) },
      (this.#clock() - legacyMs) / 1000,
    );
    // Children that waited for this record and wait for nothing else now apply.
    for (const child of this.#state.waitingOn(mapped.id)) {
      const childTable = this.#byTable.get(child.table);
      if (childTable) await this.#upsert(childTable, child.client, child.row, child.legacyMs, 'parked');
    }
  }

  async #deadLetter(table: TableMapping, client: string, row: Row, reason: string): Promise<void> {
    const source = this.#options.mapping;
    let key: string;
    try {
      key = keyOf(table, row).join('/');
    } catch {
      key = '';
    }
    await this.#producer.send({
      topic: this.#options.deadLetterTopic,
      messages: [
        {
          key: `${source.source}/${client}/${table.table}/${key}`,
          value: JSON.stringify({ source: source.source, client, table: table.table, key, reason, row }),
        },
      ],
    });
    const known = this.#state
      .deadLetters()
      .some((letter) => letter.table === table.table && letter.client === client && letter.key === key);
    this.#state.deadLetter({
      table: table.table,
      key,
      client,
      reason,
      row: { ...row },
      since: this.#clock(),
    });
    if (!known) this.#dead.inc({ source: source.source, table: table.table });
  }

  /** Children whose parents did not land within the park TTL dead-letter as "missing parent". */
  async #expire(): Promise<void> {
    for (const parked of this.#state.parkedBefore(this.#clock() - this.#options.parkTtlMs)) {
      const table = this.#byTable.get(parked.table);
      if (!table) continue;
      // Dead letter first: a crash between the two leaves the row both parked and dead, never neither.
      await this.#deadLetter(
        table,
        parked.client,
        parked.row,
        `missing parent ${parked.waitingOn.join(', ')}`,
      );
      this.#state.unpark(parked.id);
    }
  }

  /** PUT replaces a live record; an id the write-api does not have (never written, or deleted) is POSTed with its id. */
  async #put(entity: string, id: string, record: Record<string, unknown>): Promise<void> {
    const put = await this.#request('PUT', `/${entity}/api/${id}`, { ...record, id });
    if (put.status === 200) return;
    if (put.status === 404) {
      const post = await this.#request('POST', `/${entity}/api`, { ...record, id });
      if (post.status === 201) return;
      if (post.status === 409) return this.#put(entity, id, record);
      await this.#refuseOrThrow(post);
    }
    await this.#refuseOrThrow(put);
  }

  async #write(method: 'DELETE', entity: string, id: string): Promise<number> {
    const response = await this.#request(method, `/${entity}/api/${id}`);
    if (response.status === 200 || response.status === 404) return response.status;
    await this.#refuseOrThrow(response);
    return response.status;
  }

  async #refuseOrThrow(response: Response): Promise<never> {
    const body = await response.text();
    // A 400 is the write-api's judgement of the record: a data problem for the dead-letter topic.
    if (response.status === 400) throw new WriteRefused(`write-api refused the record: ${body}`);
    // Anything else (5xx, 401, 429) is the write side's trouble: the change is retried, never dropped.
    throw new Error(`eggmesh-legacy-sync: write-api answered ${response.status}: ${body}`);
  }

  async #request(method: string, path: string, body?: unknown): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await fetch(`${this.#options.writeUrl}${path}`, {
          method,
          headers: {
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(this.#options.writeToken ? { authorization: `Bearer ${this.#options.writeToken}` } : {}),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        if (response.status < 500 && response.status !== 429) return response;
        if (attempt >= 20) return response;
        await response.arrayBuffer();
      } catch (error) {
        if (attempt >= 20) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 100 * 2 ** attempt)));
    }
  }
}
