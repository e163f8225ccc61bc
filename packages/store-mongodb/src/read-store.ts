import { type EntityName, entities } from '@eggmesh/schema';
import {
  type AggregateGroup,
  type AggregateOptions,
  type PageOptions,
  type ProjectionChange,
  planAggregate,
  planQuery,
  type QueryOptions,
  type QueryPage,
  type ReadOptions,
  type ReadStore,
  type ReadView,
  type RelationPageOptions,
  type StoredRecord,
} from '@eggmesh/store';
import type { ClusterTime, Db, MongoClient, ReadPreferenceMode } from 'mongodb';
import { type ConnectOptions, connect } from './client-limits.js';
import { translated } from './errors.js';
import { LOG, MongoEventLog } from './event-log.js';
import { MongoProjectionReader, PROJECTOR_META } from './projection-store.js';
import { MongoEntityReader } from './reader.js';
import { CausalClock, sessionDb } from './session-db.js';
import { Wake, type WakeMode, waitUntil } from './wake.js';

export interface MongoReadStoreOptions {
  readonly uri: string;
  readonly dbName: string;
  /**
   * Where the projections live when not in `dbName` on `uri` (EGGMESH_MONGODB_PROJECTIONS_URI): a
   * database of their own, on the same deployment or another one.
   */
  readonly projections?: { readonly uri: string; readonly dbName: string };
  /** Where reads go; `secondaryPreferred` (the default) spreads them over the replica set. */
  readonly readPreference?: ReadPreferenceMode;
  readonly serverSelectionTimeoutMS?: number;
  /** How `changed` wakes: a change stream where the server has them (`auto`, default) or the bounded poll. */
  readonly wake?: 'auto' | WakeMode;
  /**
   * How long a projection read waits for the projector to finish a batch it is applying before it
   * finishes the batch itself (a projector that died mid-batch); default 2000 ms.
   */
  readonly pendingGraceMs?: number;
}

/**
 * The read side on MongoDB (the `ReadStore` port), through a client on `secondaryPreferred`:
 * entities from the versioned collections, projections through `MongoProjectionReader` (whole
 * batches only), and the two positions the x-min-position wait compares against.
 */
export class MongoReadStore implements ReadStore {
  private readonly entities: MongoEntityReader;
  readonly projections: MongoProjectionReader;
  private readonly log: MongoEventLog;
  private wake: Promise<Wake> | undefined;
  /** The positions last answered, so `changed` resolves as soon as either moved past them. */
  private seen = { replica: -1, projection: -1 };

  private constructor(
    private readonly clients: Clients,
    private readonly dbs: { readonly entities: Db; readonly projections: Db },
    private readonly wakeMode: 'auto' | WakeMode,
    private readonly pendingGraceMs: number | undefined,
    private readonly ending?: () => Promise<void>,
    log?: MongoEventLog,
  ) {
    this.entities = new MongoEntityReader(dbs.entities);
    this.projections = new MongoProjectionReader(dbs.projections, pendingGraceMs);
    // The read side never closes log gaps: the writers and the projector do.
    this.log = log ?? new MongoEventLog(dbs.entities, { fillGaps: false, wake: 'poll' });
  }

  private get isView(): boolean {
    return this.ending !== undefined;
  }

  /** Connects (failing with STORE_UNAVAILABLE when no server answers in time). */
  static async open(options: MongoReadStoreOptions): Promise<MongoReadStore> {
    const connectOptions = (uri: string): ConnectOptions => ({
      uri,
      readPreference: options.readPreference ?? 'secondaryPreferred',
      ...(options.serverSelectionTimeoutMS === undefined
        ? {}
        : { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS }),
    });
    const entities = await connect(connectOptions(options.uri), Clients.member);
    const apart = options.projections !== undefined && options.projections.uri !== options.uri;
    let projections: Member = entities;
    try {
      if (apart) projections = await connect(connectOptions(options.projections.uri), Clients.member);
    } catch (error) {
      await entities.client.close();
      throw error;
    }
    const clients = new Clients(entities, projections);
    const dbs = {
      entities: entities.client.db(options.dbName),
      projections: projections.client.db(options.projections?.dbName ?? options.dbName),
    };
    return new MongoReadStore(clients, dbs, options.wake ?? 'auto', options.pendingGraceMs);
  }

  /** The client entities and the log are read through (its topology: tests, ping). */
  get client(): MongoClient {
    return this.clients.entities.client;
  }

  /**
   * One request's view, so that a read after the `x-min-position` wait is served by a member that has
   * applied what the wait saw. Where the servers have sessions (a replica set), the view keeps one
   * causal clock per deployment: each of its reads (position reads and data reads alike, in parallel
   * as GraphQL resolves) runs in a session of its own that carries the clock's `afterClusterTime`, so
   * whichever secondary serves it applies at least what the view's earlier reads reflected, and moves
   * the clock on. The view starts from the log walk this store already did (its contiguous prefix and
   * applied position) and orders itself after the reads that taught it: the clock starts at the
   * cluster time this client has seen, which is at least the operation time of each of those reads.
   * A server without sessions is a single server, not a replica set: one
   * copy of the data, and the store is its own view.
   */
  view(): ReadView {
    if (!this.clients.entities.sessions && !this.clients.projections.sessions) return this;
    // One clock per client (causal time belongs to its deployment), shared by its databases.
    const clocks = new Map<Member, CausalClock>();
    const bound = (member: Member, db: Db): Db => {
      if (!member.sessions) return db;
      let clock = clocks.get(member);
      if (!clock) {
        clock = new CausalClock(member.client);
        clocks.set(member, clock);
      }
      return sessionDb(db, clock);
    };
    const entities = bound(this.clients.entities, this.dbs.entities);
    const projections = bound(this.clients.projections, this.dbs.projections);
    const log = this.log.fork(entities);
    // After the fork: the cluster time seen now covers every read the forked state came from.
    const seen = clusterTimeOf(this.clients.entities.client);
    if (seen) clocks.get(this.clients.entities)?.advance(seen, seen.clusterTime);
    return new MongoReadStore(
      this.clients,
      { entities, projections },
      'poll',
      this.pendingGraceMs,
      async () => {
        await Promise.all([...clocks.values()].map((clock) => clock.end()));
      },
      log,
    );
  }

  /** Ends a view (its sessions); the store itself, its own view on a single server, has none to end. */
  async end(): Promise<void> {
    if (this.isView) await this.close();
  }

  private source(entity: EntityName): MongoEntityReader {
    return entities[entity].kind === 'projection' ? this.projections : this.entities;
  }

  /**
   * The **applied** position: the highest position up to which every commit's versions are in the
   * entity collections. The log's contiguous head is read first, then the first record not yet
   * applied: a record at or below that head was in the log before the second query, so it is either
   * found unapplied there or its versions are in. Without transactions a commit's record is written
   * before its versions, so the log head alone could run ahead of what entity reads show.
   */
  replicaPosition(): Promise<number> {
    return translated(async () => {
      const head = await this.log.head();
      const position = await this.log.appliedUpTo(head);
      if (position > this.seen.replica) this.seen.replica = position;
      return position;
    });
  }

  /** The checkpoint whole projection batches are visible up to. */
  async projectionPosition(): Promise<number> {
    const position = await this.projections.checkpoint();
    if (position > this.seen.projection) this.seen.projection = position;
    return position;
  }

  /**
   * Resolves once either position moved past what this store last answered (or after `timeoutMs`, or
   * on abort). Wakes on change streams of `event_log` and `projector_meta` where the server has them,
   * else re-checks on the bounded poll (20 ms, backing off to 100 ms).
   */
  async changed(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const before = { ...this.seen };
    this.wake ??= Wake.open(this.dbs.entities, [LOG], this.wakeMode, this.dbs.projections, [PROJECTOR_META]);
    const wake = await this.wake;
    await waitUntil(
      wake,
      async () => {
        try {
          const [replica, projection] = await Promise.all([
            this.replicaPosition(),
            this.projectionPosition(),
          ]);
          return replica > before.replica || projection > before.projection;
        } catch {
          return true; // let the caller see the failure on its own read
        }
      },
      timeoutMs,
      signal,
    );
  }

  /** From the versions each batch wrote, stamped with its checkpoint (`position`). */
  projectionChanges(after: number, through: number): Promise<ProjectionChange[]> {
    return this.projections.changes(after, through);
  }

  ping(): Promise<void> {
    return translated(async () => {
      await this.clients.ping();
    });
  }

  get(entity: EntityName, id: string, options?: ReadOptions): Promise<StoredRecord | null> {
    return this.source(entity).get(entity, id, options);
  }
  getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions): Promise<StoredRecord[]> {
    return this.source(entity).getMany(entity, ids, options);
  }
  findBy(entity: EntityName, field: string, value: string, options: PageOptions): Promise<StoredRecord[]> {
    return this.source(entity).findBy(entity, field, value, options);
  }
  findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): Promise<StoredRecord[]> {
    return this.source(entity).findByAny(entity, field, values, options);
  }
  list(entity: EntityName, options: PageOptions): Promise<StoredRecord[]> {
    return this.source(entity).list(entity, options);
  }

  async query(entity: EntityName, options: QueryOptions): Promise<QueryPage> {
    return this.source(entity).query(planQuery(entity, options));
  }

  async aggregate(entity: EntityName, options: AggregateOptions): Promise<AggregateGroup[]> {
    return this.entities.aggregate(planAggregate(entity, options));
  }

  async close(): Promise<void> {
    const wake = this.wake;
    this.wake = undefined;
    if (wake) await (await wake).close();
    await (this.ending ?? (() => this.clients.close()))();
  }
}

/**
 * The highest cluster time the client has seen gossiped by the servers (at least the operation time
 * of every read it made). The driver keeps it on its topology, which its typings do not export.
 */
function clusterTimeOf(client: MongoClient): ClusterTime | undefined {
  return (client as unknown as { topology?: { clusterTime?: ClusterTime } }).topology?.clusterTime;
}

/** A connected client, and whether its server has sessions (a replica set member does). */
interface Member {
  readonly client: MongoClient;
  readonly sessions: boolean;
}

/** The read store's clients: one, or one more when the projections live on another deployment. */
class Clients {
  constructor(
    readonly entities: Member,
    readonly projections: Member,
  ) {}

  static async member(client: MongoClient): Promise<Member> {
    // `isMaster`, not `hello`: mongo-java-server (wire version 13) knows only the older name.
    const hello = await client.db('admin').command({ isMaster: 1 });
    return { client, sessions: hello.logicalSessionTimeoutMinutes != null };
  }

  async ping(): Promise<void> {
    await this.entities.client.db('admin').command({ ping: 1 });
    if (this.projections !== this.entities) await this.projections.client.db('admin').command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.entities.client.close();
    if (this.projections !== this.entities) await this.projections.client.close();
  }
}

export function openMongoReadStore(options: MongoReadStoreOptions): Promise<MongoReadStore> {
  return MongoReadStore.open(options);
}
