import { randomUUID } from 'node:crypto';
import { type EntityName, entities } from '@eggmesh/schema';
import {
  type LoadedProjections,
  type PageOptions,
  type PlannedQuery,
  type ProjectionChange,
  type ProjectionCommit,
  type ProjectionDocument,
  type ProjectionKeys,
  type ProjectionStateRow,
  type ProjectionStore,
  type ProjectionWrite,
  projectionKey,
  type QueryPage,
  type ReadOptions,
  type RelationPageOptions,
  type StoredRecord,
  StoreError,
  storeErrorCodes,
} from '@eggmesh/store';
import {
  type AnyBulkWriteOperation,
  type Collection,
  type Db,
  MongoBulkWriteError,
  type MongoClient,
} from 'mongodb';
import { type ConnectOptions, connect } from './client-limits.js';
import { ignoreDuplicate, isDuplicateKey, translated } from './errors.js';
import { Lease, needsLease } from './lease.js';
import { type CurrentDoc, MongoEntityReader, projectionEntities, type VersionDoc } from './reader.js';

export const PROJECTOR_META = 'projector_meta';
const STATE = 'projector_state';
const BATCHES = 'projector_batches';
const COMMITS = 'projector_commits';
/** Documents + state rows per pending-batch chunk (each chunk is one document, under 16 MB). */
const CHUNK = 200;

/** A committed batch whose writes are not (all) in place yet. */
interface Pending {
  batch: string;
  checkpoint: number;
  chunks: number;
}

/** `projector_meta` holds one document: the checkpoint, and the batch being applied if any. */
export interface MetaDoc {
  _id: 'checkpoint';
  value: number;
  pending: Pending | null;
}

interface StateDoc {
  _id: string;
  kind: string;
  id: string;
  value: Record<string, unknown>;
  ref: string | null;
  /** The checkpoint of the batch that wrote it. */
  position: number;
}

/**
 * The commit point of one batch: `_id` is the checkpoint the batch starts from, so the unique `_id`
 * lets exactly one batch follow each checkpoint. An insert is atomic on every MongoDB-wire server; a
 * conditional update is not (FerretDB 1.24 let two compare-and-sets on one document both match).
 */
interface CommitDoc extends Pending {
  _id: number;
}

interface ChunkDoc {
  _id: string;
  batch: string;
  n: number;
  documents: ProjectionWrite[];
  state: ProjectionStateRow[];
}

export interface MongoProjectionStoreOptions {
  readonly uri: string;
  readonly dbName: string;
  readonly writeConcern?: 'majority' | number;
  readonly serverSelectionTimeoutMS?: number;
  /** Test seams of the pending-batch protocol. */
  readonly hooks?: ProjectionHooks;
  /**
   * Drops every projection collection and the projector's checkpoint before opening, so the store
   * starts empty at checkpoint 0 (`rebuild-projections` replays the log into it).
   */
  readonly reset?: boolean;
  /** How long the projector lease (FerretDB only) holds without renewal; default LEASE_TTL_MS (10 s). */
  readonly leaseTtlMs?: number;
}

export interface ProjectionHooks {
  /** After the batch's commit document is in, before `projector_meta` names it pending (tests crash here). */
  afterCommitDocument?(checkpoint: number): Promise<void>;
  /** After the checkpoint compare-and-set named the batch, before any of its writes (tests crash here). */
  afterBatchCommitted?(checkpoint: number): Promise<void>;
  /** After one chunk of a pending batch was applied by this process (tests stall or crash here). */
  afterChunkApplied?(checkpoint: number, chunk: number): Promise<void>;
}

/**
 * The projection collections of one database, shared by the projector's store and the read side:
 * applies a pending batch (roll forward, idempotent) and reads the checkpoint.
 */
export class ProjectionCollections {
  readonly meta: Collection<MetaDoc>;
  readonly state: Collection<StateDoc>;
  readonly batches: Collection<ChunkDoc>;
  readonly commits: Collection<CommitDoc>;

  constructor(
    readonly db: Db,
    private readonly hooks: ProjectionHooks = {},
  ) {
    this.meta = db.collection<MetaDoc>(PROJECTOR_META);
    this.state = db.collection<StateDoc>(STATE);
    this.batches = db.collection<ChunkDoc>(BATCHES);
    this.commits = db.collection<CommitDoc>(COMMITS);
  }

  entity(entity: EntityName) {
    if (!projectionEntities.includes(entity)) {
      throw new StoreError(storeErrorCodes.NOT_FOUND, `${entity} is not a projection`, { entity });
    }
    return {
      versions: this.db.collection<VersionDoc>(`${entity}_versions`),
      current: this.db.collection<CurrentDoc>(`${entity}_current`),
    };
  }

  /** Drops the projection documents, state, pending chunks and checkpoint (a rebuild starts over). */
  async drop(): Promise<void> {
    const names = [
      PROJECTOR_META,
      STATE,
      BATCHES,
      COMMITS,
      ...projectionEntities.flatMap((e) => [`${e}_versions`, `${e}_current`]),
    ];
    const existing = new Set(
      (await this.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name),
    );
    for (const name of names) if (existing.has(name)) await this.db.collection(name).drop();
  }

  async ensureSchema(): Promise<void> {
    await this.state.createIndex({ kind: 1, ref: 1 }, { name: 'kind_ref' });
    await this.batches.createIndex({ batch: 1, n: 1 }, { name: 'batch_n' });
    for (const entity of projectionEntities) {
      const { versions, current } = this.entity(entity);
      await versions.createIndex({ id: 1, created_at: 1 }, { unique: true, name: 'id_created_at' });
      // The change feed of the live subscriptions reads versions by the batch that wrote them.
      await versions.createIndex({ position: 1 }, { name: 'position' });
      for (const field of entities[entity].indexedFields) {
        await versions.createIndex(
          { [`payload.${field}`]: 1, id: 1, created_at: 1 },
          { name: `by_${field}` },
        );
        await current.createIndex({ [`payload.${field}`]: 1, _id: 1 }, { name: `by_${field}` });
      }
    }
    await this.meta
      .insertOne({ _id: 'checkpoint', value: 0, pending: null })
      .catch((error: unknown) => ignoreDuplicate(error));
  }

  /**
   * The meta document with no batch pending (`committed`: nor a committed batch not yet named pending,
   * which the projector's store finishes; readers see the checkpoint before it until then). A pending batch is first given `graceMs` to be finished
   * by the projector applying it (readers poll for it, so N readers do not all redo its writes);
   * one still pending after that (its projector died or stalls) is finished here (roll forward).
   */
  async settled(graceMs = 0, committed = false): Promise<{ value: number }> {
    let since: number | undefined;
    let pause = 5;
    for (;;) {
      const meta = await this.meta.findOne({ _id: 'checkpoint' });
      if (!meta) return { value: 0 };
      if (!meta.pending) {
        if (!committed) return meta;
        // A batch committed (its commit document is in) whose projector stopped before naming it
        // pending, or whose `pending` a late finisher of the batch before cleared: finish it.
        const next = await this.commits.findOne({ _id: meta.value });
        if (!next || next.checkpoint <= meta.value) return meta;
        await this.finish(
          { batch: next.batch, checkpoint: next.checkpoint, chunks: next.chunks },
          meta.value,
        );
        continue;
      }
      since ??= performance.now();
      if (performance.now() - since < graceMs) {
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(50, pause * 2);
        continue;
      }
      await this.finish(meta.pending);
    }
  }

  /**
   * Applies a committed batch's writes and moves the checkpoint. Any process may run it, any number
   * of times, concurrently: every write is guarded by (batch checkpoint, created_at), so a late or
   * repeated application never replaces something newer.
   */
  async finish(pending: Pending, from?: number): Promise<void> {
    // By `_id` (`<batch>/<n>`): the one index mongo-java-server uses, so no scan of the collection.
    const ids = Array.from({ length: pending.chunks }, (_, n) => `${pending.batch}/${n}`);
    const chunks = await this.batches
      .find({ _id: { $in: ids } })
      .sort({ n: 1 })
      .toArray();
    if (chunks.length !== pending.chunks) {
      // Its chunks are removed only after the checkpoint moved on: someone else finished it.
      const meta = await this.meta.findOne({ _id: 'checkpoint' });
      if (meta?.pending?.batch !== pending.batch && meta?.value !== from) return;
      throw new Error(
        `projection batch ${pending.batch} lost chunks (${chunks.length} of ${pending.chunks})`,
      );
    }
    // Chunk by chunk: a real server applies a bulk write in parts anyway, so readers must (and do)
    // tell a batch in progress from a finished one by the meta document, not by the data.
    for (const chunk of chunks) {
      await this.write(pending.checkpoint, chunk.documents, chunk.state);
      await this.hooks.afterChunkApplied?.(pending.checkpoint, chunk.n);
    }
    // Idempotent: every finisher of this batch writes the same values. The checkpoint never goes back.
    await this.meta.updateOne(
      from === undefined
        ? { _id: 'checkpoint', 'pending.batch': pending.batch }
        : { _id: 'checkpoint', value: from, pending: null },
      { $set: { value: pending.checkpoint, pending: null } },
    );
    await this.batches.deleteMany({ _id: { $in: ids } });
  }

  /** Writes documents (versions + current) and state rows of the batch ending at `checkpoint`. */
  async write(
    checkpoint: number,
    documents: readonly ProjectionWrite[],
    state: readonly ProjectionStateRow[],
  ): Promise<void> {
    const opts = { ordered: false } as const;
    const byEntity = new Map<EntityName, ProjectionWrite[]>();
    for (const doc of documents) {
      const list = byEntity.get(doc.entity) ?? [];
      if (list.length === 0) byEntity.set(doc.entity, list);
      list.push(doc);
    }
    for (const [entity, list] of byEntity) {
      const { versions, current } = this.entity(entity);
      // Versions go in as inserts (the unique (id, created_at) index finds a clash without a scan);
      // one that clashes is replaced, unless a later batch wrote it already.
      const versionDocs = list.map((doc) => ({
        id: doc.id,
        created_at: doc.createdAt,
        deleted: !doc.live,
        payload: doc.payload,
        position: checkpoint,
      }));
      const clashes = await insertCollecting(versions, versionDocs, opts);
      if (clashes.length > 0) {
        const versionOps: AnyBulkWriteOperation<VersionDoc>[] = clashes.map((doc) => ({
          replaceOne: {
            filter: { id: doc.id, created_at: doc.created_at, position: { $lte: checkpoint } },
            // Not `doc` itself: the insert gave it an `_id` of its own.
            replacement: {
              id: doc.id,
              created_at: doc.created_at,
              deleted: doc.deleted,
              payload: doc.payload,
              position: checkpoint,
            },
          },
        }));
        await versions.bulkWrite(versionOps, opts);
      }
      // The current document moves forward in (batch, time) only; each id's last write of the batch.
      const last = new Map<string, ProjectionWrite>();
      for (const doc of list) last.set(doc.id, doc);
      const currentOps: AnyBulkWriteOperation<CurrentDoc>[] = [...last.values()].map((doc) => ({
        updateOne: {
          filter: {
            _id: doc.id,
            $or: [
              { position: { $lt: checkpoint } },
              { position: checkpoint, created_at: { $lte: doc.createdAt } },
            ],
          },
          update: {
            $set: {
              created_at: doc.createdAt,
              deleted: !doc.live,
              payload: doc.payload,
              position: checkpoint,
            },
          },
          upsert: true,
        },
      }));
      await current.bulkWrite(currentOps, opts).catch(ignoreDuplicate);
    }
    if (state.length > 0) {
      const last = new Map<string, ProjectionStateRow>();
      for (const row of state) last.set(projectionKey(row.kind, row.id), row);
      const stateOps: AnyBulkWriteOperation<StateDoc>[] = [...last].map(([key, row]) => ({
        replaceOne: {
          filter: { _id: key, position: { $lte: checkpoint } },
          replacement: { kind: row.kind, id: row.id, value: row.value, ref: row.ref, position: checkpoint },
          upsert: true,
        },
      }));
      await this.state.bulkWrite(stateOps, opts).catch(ignoreDuplicate);
    }
  }
}

/**
 * The projector's store on MongoDB. `commit` is atomic and guarded by the expected checkpoint, with the
 * pending-batch protocol on every deployment (no transactions, so no path that only a replica set
 * runs): the batch is first stored as chunk documents nobody reads, then one compare-and-set on the meta document (`value = expected`, nothing pending) names
 *   it as `pending` — that single-document write is the commit point — then its writes are applied
 *   idempotently and the checkpoint moves to the batch's end. A crash after the commit point leaves a
 *   pending batch that every `load`, `checkpoint`, open and projection read finishes first (roll
 *   forward); a crash before it leaves only orphan chunks, never read. Readers see whole batches:
 *   projection reads check the meta document before and after, and retry when a batch was applied
 *   in between (see `MongoProjectionReader`).
 *
 * On FerretDB (`needsLease`) the store first takes the `projector` lease of its database: a second
 * projector (or a rebuild) on the same projections is refused with STORE_UNAVAILABLE naming the
 * holder until that one lets go or its lease expires, instead of two writers racing on a server whose
 * conditional updates are not isolated. Commits check the lease first.
 */
export class MongoProjectionStore implements ProjectionStore {
  private constructor(
    readonly client: MongoClient,
    readonly collections: ProjectionCollections,
    private readonly hooks: ProjectionHooks,
    private readonly lease: Lease | undefined,
  ) {}

  static open(options: MongoProjectionStoreOptions): Promise<MongoProjectionStore> {
    const connectOptions: ConnectOptions = {
      uri: options.uri,
      writeConcern: options.writeConcern ?? 'majority',
      ...(options.serverSelectionTimeoutMS === undefined
        ? {}
        : { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS }),
    };
    return connect(connectOptions, async (client) => {
      const hooks = options.hooks ?? {};
      const db = client.db(options.dbName);
      const lease = (await needsLease(db))
        ? await Lease.take(db, 'projector', options.leaseTtlMs)
        : undefined;
      try {
        const collections = new ProjectionCollections(db, hooks);
        if (options.reset) await collections.drop();
        await collections.ensureSchema();
        await collections.settled(0, true);
        return new MongoProjectionStore(client, collections, hooks, lease);
      } catch (error) {
        await lease?.release();
        throw error;
      }
    });
  }

  checkpoint(): Promise<number> {
    return translated(async () => (await this.collections.settled(0, true)).value);
  }

  load(keys: ProjectionKeys): Promise<LoadedProjections> {
    return translated(async () => {
      const { value: checkpoint } = await this.collections.settled(0, true);
      const documents = new Map<string, ProjectionDocument>();
      const byEntity = new Map<EntityName, Set<string>>();
      for (const { entity, id } of keys.documents) {
        const ids = byEntity.get(entity) ?? new Set<string>();
        if (ids.size === 0) byEntity.set(entity, ids);
        ids.add(id);
      }
      for (const [entity, ids] of byEntity) {
        const docs = await this.collections
          .entity(entity)
          .current.find({ _id: { $in: [...ids] } })
          .toArray();
        for (const doc of docs) {
          documents.set(projectionKey(entity, doc._id), {
            id: doc._id,
            payload: doc.payload ?? {},
            live: !doc.deleted,
          });
        }
      }
      const state = new Map<string, ProjectionStateRow>();
      if (keys.state.length > 0) {
        const rows = await this.collections.state
          .find({ _id: { $in: [...new Set(keys.state.map((k) => projectionKey(k.kind, k.id)))] } })
          .toArray();
        for (const row of rows) state.set(row._id, toRow(row));
      }
      const stateByRef = new Map<string, ProjectionStateRow[]>();
      const refsByKind = new Map<string, Set<string>>();
      for (const { kind, ref } of keys.stateByRef) {
        stateByRef.set(projectionKey(kind, ref), []);
        const refs = refsByKind.get(kind) ?? new Set<string>();
        if (refs.size === 0) refsByKind.set(kind, refs);
        refs.add(ref);
      }
      for (const [kind, refs] of refsByKind) {
        const rows = await this.collections.state
          .find({ kind, ref: { $in: [...refs] } })
          .sort({ id: 1 })
          .toArray();
        for (const row of rows) stateByRef.get(projectionKey(kind, row.ref ?? ''))?.push(toRow(row));
      }
      return { checkpoint, documents, state, stateByRef };
    });
  }

  commit(batch: ProjectionCommit): Promise<void> {
    return translated(async () => {
      await this.lease?.hold();
      await this.commitPending(batch);
    });
  }

  private conflict(at: number, batch: ProjectionCommit): StoreError {
    return new StoreError(
      storeErrorCodes.CONFLICT,
      `checkpoint is ${at}, not ${batch.expectedCheckpoint}: a batch to ${batch.checkpoint} was not applied`,
    );
  }

  private async commitPending(batch: ProjectionCommit): Promise<void> {
    if (batch.checkpoint <= batch.expectedCheckpoint) {
      // Its commit document would claim the checkpoint it leaves in place, for ever.
      throw new StoreError(
        storeErrorCodes.CONFLICT,
        `a batch moves the checkpoint forward: ${batch.expectedCheckpoint} to ${batch.checkpoint} does not`,
      );
    }
    const settled = await this.collections.settled(0, true);
    if (settled.value !== batch.expectedCheckpoint) throw this.conflict(settled.value, batch);
    const id = randomUUID();
    const chunks: ChunkDoc[] = [];
    // Fields copied by name: BSON stores an object's own data fields only, and a writer may expose
    // some through accessors (the projector computes a version's stored payload on first use).
    const documents = batch.documents.map(
      ({ entity, id, payload, live, createdAt }): ProjectionWrite => ({
        entity,
        id,
        payload,
        live,
        createdAt,
      }),
    );
    const items = [...documents.map((d) => ({ d })), ...batch.state.map((s) => ({ s }))];
    for (let i = 0; i < items.length; i += CHUNK) {
      const slice = items.slice(i, i + CHUNK);
      chunks.push({
        _id: `${id}/${chunks.length}`,
        batch: id,
        n: chunks.length,
        documents: slice.flatMap((x) => ('d' in x ? [x.d] : [])),
        state: slice.flatMap((x) => ('s' in x ? [x.s] : [])),
      });
    }
    if (chunks.length > 0) await this.collections.batches.insertMany(chunks, { ordered: true });
    const pending: Pending = { batch: id, checkpoint: batch.checkpoint, chunks: chunks.length };
    // The commit point: the one batch that follows the expected checkpoint (unique `_id`).
    try {
      await this.collections.commits.insertOne({ _id: batch.expectedCheckpoint, ...pending });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      await this.collections.batches.deleteMany({ _id: { $in: chunks.map((c) => c._id) } });
      throw this.conflict((await this.collections.settled(0, true)).value, batch);
    }
    await this.hooks.afterCommitDocument?.(batch.checkpoint);
    // Readers tell a batch in progress by `pending` (their seqlock); only the winner writes it.
    await this.collections.meta.updateOne(
      { _id: 'checkpoint', value: batch.expectedCheckpoint, pending: null },
      { $set: { pending } },
    );
    await this.hooks.afterBatchCommitted?.(batch.checkpoint);
    await this.collections.finish(pending);
  }

  async close(): Promise<void> {
    await this.lease?.release();
    await this.client.close();
  }
}

/** Inserts `docs` unordered; answers the ones refused as duplicates (anything else throws). */
async function insertCollecting(
  collection: Collection<VersionDoc>,
  docs: VersionDoc[],
  opts: { readonly ordered: false },
): Promise<VersionDoc[]> {
  try {
    await collection.insertMany(docs, opts);
    return [];
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError)) throw error;
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (writeErrors.some((e) => e.code !== 11000)) throw error;
    return writeErrors.map((e) => docs[e.index]!);
  }
}

const toRow = (row: StateDoc): ProjectionStateRow => ({
  kind: row.kind,
  id: row.id,
  value: row.value,
  ref: row.ref,
});

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** How often a projection read starts over because batches kept landing during it, before it gives up. */
const READ_ATTEMPTS = 100;

/**
 * Reads projections as whole batches: each read looks at the meta document before and after (a
 * seqlock) and starts over when a batch was committed or applied in between; a pending batch found
 * first is finished (rolled forward) by the reader. Each read reflects exactly one checkpoint, the
 * same guarantee as one SQLite statement (separate reads may reflect different checkpoints).
 */
export class MongoProjectionReader extends MongoEntityReader {
  readonly projection: ProjectionCollections;

  /** `pendingGraceMs`: how long a read waits for the projector to finish a pending batch before finishing it itself. */
  constructor(
    db: Db,
    private readonly pendingGraceMs = 2000,
  ) {
    super(db, projectionEntities);
    this.projection = new ProjectionCollections(db);
  }

  /** The checkpoint whole batches are visible up to (a pending batch does not count yet). */
  async checkpoint(): Promise<number> {
    return translated(async () => (await this.projection.meta.findOne({ _id: 'checkpoint' }))?.value ?? 0);
  }

  private consistent<T>(read: () => Promise<T>): Promise<T> {
    return translated(async () => {
      for (let attempt = 1; ; attempt++) {
        const before = await this.projection.settled(this.pendingGraceMs);
        const out = await read();
        const after = await this.projection.meta.findOne({ _id: 'checkpoint' });
        const same = (after?.value ?? 0) === before.value && !after?.pending;
        if (same) return out;
        if (attempt >= READ_ATTEMPTS) {
          throw new StoreError(
            storeErrorCodes.UNAVAILABLE,
            `projections changed during ${attempt} reads in a row; try again`,
          );
        }
      }
    });
  }

  /**
   * The versions whose batch checkpoint (`position`) is in (`after`, `through`], each id's newest of
   * its batch, in batch order (the `position` index of each projection's versions).
   */
  changes(after: number, through: number): Promise<ProjectionChange[]> {
    return translated(async () => {
      if (through <= after) return [];
      const found = new Map<string, ProjectionChange & { readonly createdAt: number }>();
      for (const entity of projectionEntities) {
        const versions = await this.projection
          .entity(entity)
          .versions.find({ position: { $gt: after, $lte: through } })
          .toArray();
        for (const v of versions) {
          const key = `${v.position}\u0000${entity}\u0000${v.id}`;
          const seen = found.get(key);
          if (seen && seen.createdAt > v.created_at) continue;
          found.set(key, {
            position: v.position,
            entity,
            id: v.id,
            live: !v.deleted,
            payload: v.payload ?? {},
            createdAt: v.created_at,
          });
        }
      }
      return [...found.values()]
        .sort((a, b) => a.position - b.position || compareText(a.entity, b.entity) || compareText(a.id, b.id))
        .map(({ createdAt: _, ...change }) => change);
    });
  }

  override get(entity: EntityName, id: string, options?: ReadOptions): Promise<StoredRecord | null> {
    return this.consistent(() => super.get(entity, id, options));
  }
  override getMany(
    entity: EntityName,
    ids: readonly string[],
    options?: ReadOptions,
  ): Promise<StoredRecord[]> {
    return this.consistent(() => super.getMany(entity, ids, options));
  }
  override findBy(
    entity: EntityName,
    field: string,
    value: string,
    options: PageOptions,
  ): Promise<StoredRecord[]> {
    return this.consistent(() => super.findBy(entity, field, value, options));
  }
  override findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ): Promise<StoredRecord[]> {
    return this.consistent(() => super.findByAny(entity, field, values, options));
  }
  override list(entity: EntityName, options: PageOptions): Promise<StoredRecord[]> {
    return this.consistent(() => super.list(entity, options));
  }
  override query(plan: PlannedQuery): Promise<QueryPage> {
    return this.consistent(() => super.query(plan));
  }
}

export function openMongoProjectionStore(
  options: MongoProjectionStoreOptions,
): Promise<MongoProjectionStore> {
  return MongoProjectionStore.open(options);
}
