import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { LogEntry } from '@eggmesh/store';
import { currentGeneration, openProjectionStore, type SqliteProjectionStore } from '@eggmesh/store-sqlite';
import { applyEntry } from './apply.js';
import { Batch } from './batch.js';
import { CachedState } from './cache.js';

/** Reads the log in position order; the SQLite primary (read-only) is one. */
export interface LogSource {
  readLogSync(after: number, limit: number): LogEntry[];
  headSync(): number;
}

export interface StepResult {
  readonly applied: number;
  readonly position: number;
}

/**
 * Applies log batches to a projection store. Each batch's documents, state and checkpoint commit in
 * one transaction, so a crash anywhere leaves the store at a batch boundary and a restart resumes there:
 * every entry takes effect exactly once.
 */
export class Projector {
  eventsApplied = 0;
  batchesApplied = 0;
  lastBatchMs = 0;

  private readonly cache: CachedState;
  private lastCommitted = -1;

  constructor(
    private readonly log: LogSource,
    public store: SqliteProjectionStore,
    private readonly batchSize: number,
    cacheEntries = 200_000,
  ) {
    this.cache = new CachedState(store, cacheEntries);
  }

  /** Applies the next batch, if any. */
  step(): StepResult {
    const checkpoint = this.store.checkpointSync();
    // Another writer moved the checkpoint since our last commit: what we cached may be stale.
    if (checkpoint !== this.lastCommitted) this.cache.clear();
    const entries = this.log.readLogSync(checkpoint, this.batchSize);
    if (entries.length === 0) return { applied: 0, position: checkpoint };
    const started = performance.now();
    const batch = new Batch(this.cache);
    for (const entry of entries) applyEntry(batch, entry);
    const position = entries[entries.length - 1]!.position;
    try {
      this.store.commitSync({
        expectedCheckpoint: checkpoint,
        checkpoint: position,
        documents: batch.writes(),
        state: batch.stateWrites(),
      });
    } catch (error) {
      // Whatever moved the checkpoint may have changed documents too: read them afresh.
      this.cache.clear();
      throw error;
    }
    this.cache.absorb(batch);
    this.lastCommitted = position;
    this.eventsApplied += entries.length;
    this.batchesApplied += 1;
    this.lastBatchMs = performance.now() - started;
    return { applied: entries.length, position };
  }

  /** Applies batches until the log head seen at the start is reached. */
  catchUp(onProgress?: (position: number, head: number) => void): number {
    const head = this.log.headSync();
    let position = this.store.checkpointSync();
    while (position < head) {
      const result = this.step();
      if (result.applied === 0) break;
      position = result.position;
      onProgress?.(position, head);
    }
    return position;
  }

  /** Switches to the generation CURRENT names, when a rebuild promoted a new one. Returns true on a switch. */
  followCurrentGeneration(): boolean {
    const current = currentGeneration(this.store.dir);
    if (!current || current === this.store.generation) return false;
    // Never create a generation here: one CURRENT names but that does not exist is not ours to start.
    if (!existsSync(join(this.store.dir, current))) return false;
    const next = openProjectionStore({ dir: this.store.dir, generation: current });
    const old = this.store;
    this.store = next;
    this.cache.use(next);
    this.lastCommitted = -1;
    void old.close();
    return true;
  }
}
