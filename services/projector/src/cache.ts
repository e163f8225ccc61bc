import {
  type CommittedView,
  type DocOf,
  decodeDocument,
  decodeState,
  type FoldBatch,
  isStateKind,
  type ProjectionName,
  projectionNames,
  type StateKind,
  type StateOf,
  stateKinds,
  type Versioned,
} from '@eggmesh/projections';
import type { LoadedProjections, ProjectionDocument, ProjectionKeys } from '@eggmesh/store';
import { projectionKey } from '@eggmesh/store';

type DocMaps = { [N in ProjectionName]: Map<string, Versioned<DocOf[N]> | null> };
type StateMaps = { [K in StateKind]: Map<string, StateOf[K] | null> };

const isProjection = (entity: string): entity is ProjectionName =>
  projectionNames.some((name) => name === entity);

/**
 * The committed documents and state rows the projector has seen, decoded: the view the fold reads
 * (what each `load` answered goes here), kept between batches so that the next batch reads them from
 * memory instead of loading and decoding them again (docs/decisions/0001-projector-committed-cache.md:
 * the rebuild's throughput). Safe because the projector is its generation's only writer: a commit that
 * finds the checkpoint moved fails, and the caller clears the cache. `null` caches "absent". The hens
 * of a coop (a fan-out by ref) are kept for the current step only.
 */
export class CommittedCache implements CommittedView {
  private readonly docs: DocMaps = {
    container_inventory: new Map(),
    hen_productivity: new Map(),
    farm_output: new Map(),
  };
  private readonly rows: StateMaps = { coop: new Map(), hen: new Map() };
  private readonly hensByCoop = new Map<string, readonly string[]>();

  /** `maxEntries`: per map; `Infinity` keeps everything (a rebuild, whose store answers from memory anyway). */
  constructor(private readonly maxEntries: number) {}

  clear(): void {
    for (const name of projectionNames) this.docs[name].clear();
    for (const kind of stateKinds) this.rows[kind].clear();
    this.hensByCoop.clear();
  }

  get size(): number {
    let n = 0;
    for (const name of projectionNames) n += this.docs[name].size;
    for (const kind of stateKinds) n += this.rows[kind].size;
    return n;
  }

  document<N extends ProjectionName>(entity: N, id: string): Versioned<DocOf[N]> | null | undefined {
    return this.docs[entity].get(id);
  }

  state<K extends StateKind>(kind: K, id: string): StateOf[K] | null | undefined {
    return this.rows[kind].get(id);
  }

  hensIn(coopId: string): readonly string[] | undefined {
    return this.hensByCoop.get(coopId);
  }

  /** Drops `keys` already known here (what a load need not ask for). */
  unknown(keys: ProjectionKeys): ProjectionKeys {
    return {
      documents: keys.documents.filter((k) => !isProjection(k.entity) || !this.docs[k.entity].has(k.id)),
      state: keys.state.filter((k) => !isStateKind(k.kind) || !this.rows[k.kind].has(k.id)),
      stateByRef: keys.stateByRef.filter((k) => k.kind !== 'hen' || !this.hensByCoop.has(k.ref)),
    };
  }

  /** Takes in what a load answered for `keys`: found rows decoded, missing ones as absent. */
  remember(keys: ProjectionKeys, loaded: LoadedProjections): void {
    for (const { entity, id } of keys.documents) {
      if (!isProjection(entity)) continue;
      this.setDocument(entity, id, loaded.documents.get(projectionKey(entity, id)));
    }
    for (const { kind, id } of keys.state) {
      if (!isStateKind(kind)) continue;
      const found = loaded.state.get(projectionKey(kind, id));
      this.setState(kind, id, found ? decodeState(kind, found.value) : null);
    }
    for (const { kind, ref } of keys.stateByRef) {
      if (kind !== 'hen') continue;
      this.hensByCoop.set(
        ref,
        (loaded.stateByRef.get(projectionKey(kind, ref)) ?? []).map((row) => row.id),
      );
    }
  }

  private setState<K extends StateKind>(kind: K, id: string, value: StateOf[K] | null): void {
    this.rows[kind].set(id, value);
  }

  private setDocument<N extends ProjectionName>(
    entity: N,
    id: string,
    found: ProjectionDocument | undefined,
  ): void {
    this.docs[entity].set(id, found ? decodeDocument(entity, found) : null);
  }

  /** Takes in what a committed batch ended with; the oldest entries go first past the limit. */
  absorb(batch: FoldBatch): void {
    const { documents, state } = batch.touched();
    const docs = <N extends ProjectionName>(name: N) =>
      refresh(this.docs[name], documents[name], this.maxEntries);
    const rows = <K extends StateKind>(kind: K) => refresh(this.rows[kind], state[kind], this.maxEntries);
    for (const name of projectionNames) docs(name);
    for (const kind of stateKinds) rows(kind);
    this.hensByCoop.clear();
  }
}

/** Moves every key of `from` to the newest end of `into`, then trims `into` to `max` entries. */
function refresh<V>(into: Map<string, V>, from: ReadonlyMap<string, V>, max: number): void {
  if (max === Number.POSITIVE_INFINITY) {
    // Nothing is ever dropped, so the order does not matter.
    for (const [k, v] of from) into.set(k, v);
    return;
  }
  for (const [k, v] of from) {
    into.delete(k);
    into.set(k, v);
  }
  if (into.size <= max) return;
  let excess = into.size - max;
  for (const k of into.keys()) {
    if (excess-- <= 0) break;
    into.delete(k);
  }
}
