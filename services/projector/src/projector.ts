import {
  decodeEntry,
  directKeys,
  type FoldBatch,
  fold,
  KeySet,
  type TypedLogEntry,
} from '@eggmesh/projections';
import { type EventLog, type ProjectionStore, StoreError, storeErrorCodes } from '@eggmesh/store';
import { CommittedCache } from './cache.js';

export interface StepResult {
  readonly applied: number;
  readonly position: number;
}

/** Folds that still miss keys after this many loads mean a rule reads without end: a bug, not data. */
const MAX_LOADS = 16;

/**
 * Applies log batches to a projection store: read (the log after the checkpoint) → load (what the
 * batch needs, in as few `load` calls as the data allows) → fold (the pure rules of
 * @eggmesh/projections) → commit (documents, state and checkpoint in one atomic step, guarded by the
 * expected checkpoint) → acknowledge. A crash anywhere leaves the store at a batch boundary and a
 * restart resumes there: every entry takes effect exactly once. Depends only on the ports.
 */
export class Projector {
  eventsApplied = 0;
  batchesApplied = 0;
  lastBatchMs = 0;
  /** `load` calls made (a batch makes one, more when loaded state names further keys). */
  loads = 0;
  /**
   * Told, after each commit, the age of every entry the batch applied: milliseconds from its write
   * (the entry's time, the writer's clock) to this commit, when readers can see it (the lag histogram).
   */
  onApplied: ((ageMs: number) => void) | undefined;

  private readonly cache: CommittedCache;
  private lastCommitted = -1;

  constructor(
    readonly log: EventLog,
    private projectionStore: ProjectionStore,
    private readonly batchSize: number,
    cacheEntries = 200_000,
  ) {
    this.cache = new CommittedCache(cacheEntries);
  }

  get store(): ProjectionStore {
    return this.projectionStore;
  }

  /** Continues on another store (a rebuilt generation), forgetting everything cached. */
  useStore(store: ProjectionStore): void {
    this.projectionStore = store;
    this.cache.clear();
    this.lastCommitted = -1;
  }

  /** Applies the next batch, if any. */
  async step(): Promise<StepResult> {
    const store = this.projectionStore;
    const checkpoint = await store.checkpoint();
    // Another writer moved the checkpoint since our last commit: what we cached may be stale.
    if (checkpoint !== this.lastCommitted) this.cache.clear();
    const raw = await this.log.read(checkpoint, this.batchSize);
    if (raw.length === 0) return { applied: 0, position: checkpoint };
    const started = performance.now();
    const entries: TypedLogEntry[] = [];
    const keys = new KeySet();
    for (const entry of raw) {
      const typed = decodeEntry(entry);
      if (typed === null) continue;
      entries.push(typed);
      directKeys(typed, keys);
    }
    const position = raw[raw.length - 1]!.position;
    try {
      const batch = await this.foldLoading(store, checkpoint, entries, keys);
      await store.commit({
        expectedCheckpoint: checkpoint,
        checkpoint: position,
        documents: batch.documentWrites(),
        state: batch.stateWrites(),
      });
      this.cache.absorb(batch);
    } catch (error) {
      // Whatever moved the checkpoint may have changed documents too: read them afresh.
      this.cache.clear();
      this.lastCommitted = -1;
      throw error;
    }
    this.lastCommitted = position;
    const observe = this.onApplied;
    if (observe) {
      const now = Date.now();
      for (const entry of raw) observe(Math.max(0, now - entry.createdAt));
    }
    await this.log.acknowledge(position);
    this.eventsApplied += raw.length;
    this.batchesApplied += 1;
    this.lastBatchMs = performance.now() - started;
    return { applied: raw.length, position };
  }

  /** Loads what the fold needs (the entries' own keys first, then what loaded state names) and folds. */
  private async foldLoading(
    store: ProjectionStore,
    checkpoint: number,
    entries: readonly TypedLogEntry[],
    keys: KeySet,
  ): Promise<FoldBatch> {
    let wanted = keys;
    for (let round = 0; round < MAX_LOADS; round++) {
      const ask = this.cache.unknown(wanted.keys());
      if (ask.documents.length + ask.state.length + ask.stateByRef.length > 0) {
        const loaded = await store.load(ask);
        this.loads += 1;
        if (loaded.checkpoint !== checkpoint) {
          throw new StoreError(
            storeErrorCodes.CONFLICT,
            `checkpoint moved to ${loaded.checkpoint} while a batch from ${checkpoint} was being loaded`,
          );
        }
        this.cache.remember(ask, loaded);
      }
      const result = fold(this.cache, entries);
      if (result.complete) return result.batch;
      wanted = result.missing;
    }
    throw new Error(`the batch after ${checkpoint} still missed keys after ${MAX_LOADS} loads`);
  }

  /** Applies batches until the log head seen at the start is reached. */
  async catchUp(onProgress?: (position: number, head: number) => void): Promise<number> {
    const head = await this.log.head();
    let position = await this.projectionStore.checkpoint();
    while (position < head) {
      const result = await this.step();
      if (result.applied === 0) break;
      position = result.position;
      onProgress?.(position, head);
    }
    return position;
  }
}
