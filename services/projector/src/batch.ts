import type { EntityName } from '@eggmesh/schema';
import type { ProjectionDocument, ProjectionStateRow, ProjectionWrite } from '@eggmesh/store';

/** What a batch reads from the committed projection store (synchronously, inside one process). */
export interface CommittedState {
  loadDocumentsSync(entity: EntityName, ids: readonly string[]): Map<string, ProjectionDocument>;
  loadStateSync(kind: string, ids: readonly string[]): Map<string, ProjectionStateRow>;
  stateByRefSync(kind: string, ref: string): ProjectionStateRow[];
}

/** The key of a document (entity, id) or a state row (kind, id) in a batch and in the cache. */
export const key = (a: string, b: string) => `${a}\u0000${b}`;

/**
 * The documents and state a batch of log entries changes, layered over what is committed.
 * Reads see the batch's own earlier writes; `writes()` lists every document version in log order.
 */
export class Batch {
  private readonly docs = new Map<string, ProjectionDocument | null>();
  private readonly state = new Map<string, ProjectionStateRow | null>();
  private readonly refIndex = new Map<string, Map<string, ProjectionStateRow>>();
  private readonly versions = new Map<string, ProjectionWrite>();
  private readonly dirtyState = new Set<string>();

  constructor(private readonly committed: CommittedState) {}

  document(entity: EntityName, id: string): ProjectionDocument | null {
    const k = key(entity, id);
    let doc = this.docs.get(k);
    if (doc === undefined) {
      doc = this.committed.loadDocumentsSync(entity, [id]).get(id) ?? null;
      this.docs.set(k, doc);
    }
    return doc;
  }

  /** Records a document version at a log time; a later change at the same time replaces it. */
  putDocument(entity: EntityName, id: string, payload: object, live: boolean, createdAt: number): void {
    const doc = { id, payload: payload as Record<string, unknown>, live };
    this.docs.set(key(entity, id), doc);
    this.versions.set(`${key(entity, id)}\u0000${createdAt}`, { ...doc, entity, createdAt });
  }

  stateRow(kind: string, id: string): ProjectionStateRow | null {
    const k = key(kind, id);
    let row = this.state.get(k);
    if (row === undefined) {
      row = this.committed.loadStateSync(kind, [id]).get(id) ?? null;
      this.state.set(k, row);
    }
    return row;
  }

  putState(kind: string, id: string, value: Record<string, unknown>, ref: string | null): void {
    const previous = this.stateRow(kind, id);
    if (previous?.ref) this.refIndex.get(key(kind, previous.ref))?.delete(id);
    const row = { kind, id, value, ref };
    this.state.set(key(kind, id), row);
    this.dirtyState.add(key(kind, id));
    if (ref !== null) {
      const k = key(kind, ref);
      const ids = this.refIndex.get(k) ?? new Map<string, ProjectionStateRow>();
      this.refIndex.set(k, ids);
      ids.set(id, row);
    }
  }

  /** State rows whose ref is `ref`, as of the batch's own changes. */
  stateByRef(kind: string, ref: string): ProjectionStateRow[] {
    const out = new Map<string, ProjectionStateRow>();
    // A committed row counts unless this batch changed it (a row only read is still the committed one).
    for (const row of this.committed.stateByRefSync(kind, ref)) {
      if (!this.dirtyState.has(key(kind, row.id))) out.set(row.id, row);
    }
    for (const [id, row] of this.refIndex.get(key(kind, ref)) ?? []) out.set(id, row);
    return [...out.values()];
  }

  /** Every document and state row the batch read or wrote, as they stand at its end (null: absent). */
  touched(): {
    documents: Map<string, ProjectionDocument | null>;
    state: Map<string, ProjectionStateRow | null>;
  } {
    return { documents: this.docs, state: this.state };
  }

  writes(): ProjectionWrite[] {
    return [...this.versions.values()];
  }

  stateWrites(): ProjectionStateRow[] {
    const out: ProjectionStateRow[] = [];
    for (const k of this.dirtyState) {
      const row = this.state.get(k);
      if (row) out.push(row);
    }
    return out;
  }
}
