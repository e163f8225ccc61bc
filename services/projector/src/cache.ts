import type { EntityName } from '@eggmesh/schema';
import type { ProjectionDocument, ProjectionStateRow } from '@eggmesh/store';
import { type Batch, type CommittedState, key } from './batch.js';

/**
 * Keeps the documents and state rows recent batches ended with, so the next batch reads them from
 * memory instead of SQLite. Safe because the projector is its generation's only writer: a commit
 * that finds the checkpoint moved fails, and the caller clears the cache.
 */
export class CachedState implements CommittedState {
  private readonly documents = new Map<string, ProjectionDocument | null>();
  private readonly state = new Map<string, ProjectionStateRow | null>();

  constructor(
    private store: CommittedState,
    private readonly maxEntries: number,
  ) {}

  /** Reads through to another store from now on (after a generation switch), forgetting everything. */
  use(store: CommittedState): void {
    this.store = store;
    this.clear();
  }

  clear(): void {
    this.documents.clear();
    this.state.clear();
  }

  get size(): number {
    return this.documents.size + this.state.size;
  }

  loadDocumentsSync(entity: EntityName, ids: readonly string[]): Map<string, ProjectionDocument> {
    const out = new Map<string, ProjectionDocument>();
    const missing: string[] = [];
    for (const id of ids) {
      const cached = this.documents.get(key(entity, id));
      if (cached === undefined) missing.push(id);
      else if (cached !== null) out.set(id, cached);
    }
    if (missing.length > 0)
      for (const [id, doc] of this.store.loadDocumentsSync(entity, missing)) out.set(id, doc);
    return out;
  }

  loadStateSync(kind: string, ids: readonly string[]): Map<string, ProjectionStateRow> {
    const out = new Map<string, ProjectionStateRow>();
    const missing: string[] = [];
    for (const id of ids) {
      const cached = this.state.get(key(kind, id));
      if (cached === undefined) missing.push(id);
      else if (cached !== null) out.set(id, cached);
    }
    if (missing.length > 0) for (const [id, row] of this.store.loadStateSync(kind, missing)) out.set(id, row);
    return out;
  }

  stateByRefSync(kind: string, ref: string): ProjectionStateRow[] {
    return this.store.stateByRefSync(kind, ref);
  }

  /** Takes in what a committed batch ended with; the oldest entries go first past the limit. */
  absorb(batch: Batch): void {
    const { documents, state } = batch.touched();
    for (const [k, doc] of documents) {
      this.documents.delete(k);
      this.documents.set(k, doc);
    }
    for (const [k, row] of state) {
      this.state.delete(k);
      this.state.set(k, row);
    }
    trim(this.documents, this.maxEntries);
    trim(this.state, this.maxEntries);
  }
}

function trim(map: Map<string, unknown>, max: number): void {
  if (map.size <= max) return;
  let excess = map.size - max;
  for (const k of map.keys()) {
    if (excess-- <= 0) break;
    map.delete(k);
  }
}
