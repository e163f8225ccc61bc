import { entities } from '@eggmesh/schema';
import {
  type DocOf,
  effectsOf,
  type ProjectionName,
  projectionNames,
  type RegisteredProjection,
  registeredProjection,
  registeredProjections,
} from '../registry.js';
import { type ActorFact, actorKeys, applyActor, refOf, type StateKind, type StateOf } from './actors.js';
import type { TypedLogEntry } from './entries.js';
import { foldKey, KeySet } from './keys.js';
import type { Documents, Versioned } from './projection.js';
import { documentJson, storedDocument } from './stored.js';

/**
 * The committed projections a fold starts from, as far as they are loaded: `undefined` means "not
 * loaded" (the fold records the key as missing), `null` means "loaded and absent".
 */
export interface CommittedView {
  document<N extends ProjectionName>(entity: N, id: string): Versioned<DocOf[N]> | null | undefined;
  state<K extends StateKind>(kind: K, id: string): StateOf[K] | null | undefined;
  /** The hens whose committed state points at `coopId`. */
  hensIn(coopId: string): readonly string[] | undefined;
}

/** What the rules read: the projections and the projector's state as they stand before an entry. */
export interface ProjectionView {
  /** A document, or null when there is none yet. */
  document<N extends ProjectionName>(entity: N, id: string): Versioned<DocOf[N]> | null;
  /** A state row's value, or null when there is none yet. */
  state<K extends StateKind>(kind: K, id: string): StateOf[K] | null;
  /** The hens whose state points at `coopId` (live or not). */
  hensIn(coopId: string): readonly string[];
}

/** A view the rules also write to; each write is seen by the reads that follow. */
export interface ProjectionWorkspace extends ProjectionView {
  /** A new version of a document at log time `createdAt`. */
  putDocument<N extends ProjectionName>(
    entity: N,
    id: string,
    doc: DocOf[N],
    live: boolean,
    createdAt: number,
  ): void;
  putState<K extends StateKind>(kind: K, id: string, value: StateOf[K]): void;
}

/** The documents of projection `p` in `w`, as its rules see them while an entry written at `at` is applied. */
class WorkspaceDocuments implements Documents<object> {
  constructor(
    private readonly w: ProjectionWorkspace,
    private readonly p: RegisteredProjection,
    readonly at: number,
  ) {}

  get(id: string): Versioned<object> {
    return this.w.document(this.p.name, id) ?? { doc: this.p.empty(id), live: false };
  }

  put(id: string, doc: object, live: boolean): void {
    this.w.putDocument(this.p.name, id, doc as DocOf[ProjectionName], live, this.at);
  }
}

/**
 * Applies one log entry to the projections in `w`. An actor's entry goes to every projection, then
 * to the actor rules, which keep the coop and hen state and pass on what follows from it; an event
 * goes through its effects, each to the projection it targets. Reads and writes only `w`.
 */
export function applyEntry(w: ProjectionWorkspace, entry: TypedLogEntry): void {
  const at = entry.createdAt;
  if (entities[entry.entity].kind === 'actor') {
    const all = registeredProjections.map((p) => ({ p, docs: new WorkspaceDocuments(w, p, at) }));
    for (const { p, docs } of all) p.apply(docs, { type: 'actor', entry });
    applyActor(w, entry, (fact: ActorFact) => {
      for (const { p, docs } of all) p.apply(docs, fact);
    });
    return;
  }
  for (const effect of effectsOf(entry)) {
    const p = registeredProjection(effect.target);
    p.apply(new WorkspaceDocuments(w, p, at), { type: 'effect', effect });
  }
}

/**
 * The keys an entry needs that its own fields name (its id, the ids in its payloads, its effects'
 * targets). Keys that follow from loaded state (a coop's farm, the hens of a coop) are found by
 * folding: `fold` reports them as missing.
 */
export function directKeys(entry: TypedLogEntry, into: KeySet): void {
  actorKeys(entry, into);
  for (const p of registeredProjections) for (const id of p.keysOf(entry)) into.document(p.name, id);
}

/**
 * A document version the fold wrote, in the shape of the store's `ProjectionWrite`: `payload` is the
 * stored form and `json` the same as JSON text; each is built on first use (a SQLite store reads only
 * `json`, a MongoDB store only `payload`).
 */
export class DocumentVersion {
  private stored: Record<string, unknown> | undefined;
  private text: string | undefined;

  constructor(
    readonly entity: ProjectionName,
    readonly id: string,
    /** The document as the fold keeps it. */
    readonly doc: DocOf[ProjectionName],
    readonly live: boolean,
    readonly createdAt: number,
  ) {}

  get payload(): Record<string, unknown> {
    this.stored ??= storedDocument(this.doc);
    return this.stored;
  }

  get json(): string {
    this.text ??= documentJson(this.doc);
    return this.text;
  }
}

/** A state row the fold wrote (the shape of the store's `ProjectionStateRow`). */
export interface StateWrite {
  readonly kind: StateKind;
  readonly id: string;
  readonly value: StateOf[StateKind];
  readonly ref: string | null;
}

type DocMaps = { [N in ProjectionName]: Map<string, Versioned<DocOf[N]> | null> };
type StateMaps = { [K in StateKind]: Map<string, StateOf[K] | null> };

/** One empty map per projection. */
const perProjection = <T extends { [N in ProjectionName]: Map<string, unknown> }>(): T =>
  Object.fromEntries(projectionNames.map((name) => [name, new Map()])) as T;

/**
 * The documents and state a batch of entries changes, layered over the committed view. Reads see the
 * batch's own earlier writes; a read the view cannot answer is recorded in `missing` and answered as
 * "absent" (the fold is then incomplete and must run again once the keys are loaded).
 */
export class FoldBatch implements ProjectionWorkspace {
  readonly missing = new KeySet();
  private readonly docs = perProjection<DocMaps>();
  private readonly rows: StateMaps = { coop: new Map(), hen: new Map() };
  /** Hens whose state this batch wrote, by the coop they now point at. */
  private readonly hensByCoop = new Map<string, Set<string>>();
  private readonly dirtyHens = new Set<string>();
  /** Every version written, in log order. */
  private readonly versions: DocumentVersion[] = [];
  /** Where each document's newest version sits in `versions`. */
  private readonly newest = perProjection<{ [N in ProjectionName]: Map<string, number> }>();
  private readonly dirtyState = new Map<string, StateWrite>();

  constructor(private readonly committed: CommittedView) {}

  document<N extends ProjectionName>(entity: N, id: string): Versioned<DocOf[N]> | null {
    const map = this.docs[entity];
    const known = map.get(id);
    if (known !== undefined) return known;
    const loaded = this.committed.document(entity, id);
    if (loaded === undefined) {
      this.missing.document(entity, id);
      return null;
    }
    map.set(id, loaded);
    return loaded;
  }

  putDocument<N extends ProjectionName>(
    entity: N,
    id: string,
    doc: DocOf[N],
    live: boolean,
    createdAt: number,
  ): void {
    this.docs[entity].set(id, { doc, live });
    const version = new DocumentVersion(entity, id, doc, live, createdAt);
    // Log times never go back, so only a document's newest version can share this one's time: replace it.
    const at = this.newest[entity].get(id);
    if (at !== undefined && this.versions[at]!.createdAt === createdAt) this.versions[at] = version;
    else this.newest[entity].set(id, this.versions.push(version) - 1);
  }

  state<K extends StateKind>(kind: K, id: string): StateOf[K] | null {
    const map = this.rows[kind];
    const known = map.get(id);
    if (known !== undefined) return known;
    const loaded = this.committed.state(kind, id);
    if (loaded === undefined) {
      this.missing.state(kind, id);
      return null;
    }
    map.set(id, loaded);
    return loaded;
  }

  putState<K extends StateKind>(kind: K, id: string, value: StateOf[K]): void {
    if (kind === 'hen') {
      const before = this.state('hen', id);
      if (before?.coop_id) this.hensByCoop.get(before.coop_id)?.delete(id);
      this.dirtyHens.add(id);
    }
    this.rows[kind].set(id, value);
    const ref = refOf(kind, value);
    if (kind === 'hen' && ref !== null) {
      const hens = this.hensByCoop.get(ref) ?? new Set<string>();
      this.hensByCoop.set(ref, hens);
      hens.add(id);
    }
    this.dirtyState.set(foldKey(kind, id), { kind, id, value, ref });
  }

  hensIn(coopId: string): readonly string[] {
    const out = new Set<string>();
    const committed = this.committed.hensIn(coopId);
    if (committed === undefined) this.missing.byRef('hen', coopId);
    // A committed row counts unless this batch changed it (a row only read is still the committed one).
    for (const id of committed ?? []) if (!this.dirtyHens.has(id)) out.add(id);
    for (const id of this.hensByCoop.get(coopId) ?? []) out.add(id);
    return [...out];
  }

  /** Every document version written, in log order (a later write at the same time replaces an earlier one). */
  documentWrites(): DocumentVersion[] {
    return [...this.versions];
  }

  /** Every state row written, as it stands at the end of the batch. */
  stateWrites(): StateWrite[] {
    return [...this.dirtyState.values()];
  }

  /** Every document and state row read or written, as it stands at the end of the batch (null: absent). */
  touched(): { readonly documents: Readonly<DocMaps>; readonly state: Readonly<StateMaps> } {
    return { documents: this.docs, state: this.rows };
  }
}

/** What folding a batch gave: the writes, or the keys it still needs loaded. */
export type FoldResult =
  | { readonly complete: true; readonly batch: FoldBatch }
  | { readonly complete: false; readonly missing: KeySet };

/**
 * Folds `entries` over `committed` with the pure rules. Complete when every read was answered;
 * otherwise the writes are meaningless and `missing` lists what to load before folding again.
 */
export function fold(committed: CommittedView, entries: readonly TypedLogEntry[]): FoldResult {
  const batch = new FoldBatch(committed);
  for (const entry of entries) applyEntry(batch, entry);
  return batch.missing.size === 0 ? { complete: true, batch } : { complete: false, missing: batch.missing };
}
