import { describe, expect, it } from 'vitest';
import {
  type CommittedView,
  type CoopState,
  type DocOf,
  decodeCoopState,
  decodeEntry,
  decodeFarmDoc,
  decodeHenState,
  directKeys,
  emptyDocument,
  fold,
  foldKey,
  type HenState,
  KeySet,
  type ProjectionName,
  type RawLogEntry,
  type StateKind,
  type StateOf,
  type TypedLogEntry,
  type Versioned,
} from '../src/index.js';
import { C1, COOP, FARM, FARM2, HEN, lay } from './fixtures.js';

const HEN2 = '88888888-8888-4888-8888-888888888888';
const COOP2 = '99999999-9999-4999-8999-999999999999';
const T = Date.UTC(2026, 10, 22, 12);

/** Committed projections held in memory; everything is "loaded" (absent keys read as null). */
class Memory implements CommittedView {
  docs = new Map<string, Versioned<DocOf[ProjectionName]>>();
  coops = new Map<string, CoopState>();
  hens = new Map<string, HenState>();
  /** When set, only these keys count as loaded; the rest answer `undefined`. */
  loaded: Set<string> | null = null;

  private has(k: string) {
    return this.loaded === null || this.loaded.has(k);
  }
  document<N extends ProjectionName>(entity: N, id: string): Versioned<DocOf[N]> | null | undefined {
    if (!this.has(foldKey(entity, id))) return undefined;
    const found = this.docs.get(foldKey(entity, id));
    if (!found) return null;
    // Re-decode to the entity's type through the public decoder: the test store keeps them untyped.
    return { doc: { ...emptyDocument(entity, id), ...found.doc }, live: found.live } as Versioned<DocOf[N]>;
  }
  state<K extends StateKind>(kind: K, id: string): StateOf[K] | null | undefined {
    if (!this.has(foldKey(kind, id))) return undefined;
    const map: Map<string, StateOf[StateKind]> = kind === 'coop' ? this.coops : this.hens;
    const value = map.get(id);
    return value === undefined ? null : (value as StateOf[K]);
  }
  hensIn(coopId: string): readonly string[] | undefined {
    if (!this.has(foldKey('hen', coopId))) return undefined;
    return [...this.hens].filter(([, h]) => h.coop_id === coopId).map(([id]) => id);
  }
  /** Folds entries (all keys loaded) and commits the result here, like the projector does. */
  apply(...raw: RawLogEntry[]) {
    const entries = raw.map((e) => decodeEntry(e)).filter((e): e is TypedLogEntry => e !== null);
    const result = fold(this, entries);
    if (!result.complete) throw new Error('incomplete fold over a fully loaded view');
    for (const v of result.batch.documentWrites())
      this.docs.set(foldKey(v.entity, v.id), { doc: v.doc, live: v.live });
    for (const s of result.batch.stateWrites()) {
      if (s.kind === 'coop') this.coops.set(s.id, decodeCoopState(s.value));
      else this.hens.set(s.id, decodeHenState(s.value));
    }
    return result.batch;
  }
  doc(entity: ProjectionName, id: string): object | undefined {
    return this.docs.get(foldKey(entity, id))?.doc;
  }
}

let position = 0;
const entry = (
  entity: RawLogEntry['entity'],
  id: string,
  op: RawLogEntry['op'],
  payload: Record<string, unknown> | null,
  previous: Record<string, unknown> | null = null,
  createdAt = T,
): RawLogEntry => ({ position: ++position, entity, id, op, payload, previous, createdAt });

const farm = (farm_type = 'megafarm') => ({ name: 'F', farm_type, zone: 'north' });
const coop = (farm_id: string) => ({ name: 'C', farm_id, capacity: 10, coop_type: 'barn' });
const hen = (coop_id: string, status?: string) => ({
  name: 'H',
  coop_id,
  breed: 'x',
  ...(status ? { status } : {}),
});

describe('decodeEntry', () => {
  it('types an entry by entity and keeps only the fields the rules read, checked', () => {
    const e = decodeEntry(entry('hen', HEN, 'create', { ...hen(COOP, 'retired'), extra: 1 }));
    expect(e).toMatchObject({ entity: 'hen', id: HEN, payload: { coop_id: COOP, status: 'retired' } });
    expect(e?.payload).not.toHaveProperty('extra');
  });

  it('reads a field whose value the schema rejects as absent', () => {
    const e = decodeEntry(entry('hen', HEN, 'create', { coop_id: 42, status: 'sleeping' }));
    expect(e?.payload).toEqual({ coop_id: undefined, status: undefined });
    const f = decodeEntry(entry('farm', FARM, 'create', { farm_type: 'castle' }));
    expect(f?.payload).toEqual({ farm_type: undefined });
  });

  it('gives null for the projection entities, which the log never holds', () => {
    expect(decodeEntry(entry('farm_output', FARM, 'create', {}))).toBeNull();
  });
});

describe('state and document decoders', () => {
  it('fill missing or mistyped fields with the empty values', () => {
    expect(decodeCoopState({ farm_id: 7, live: 'yes', hens: 2 })).toEqual({
      farm_id: null,
      live: false,
      hens: 2,
      active: 0,
    });
    expect(decodeHenState({ coop_id: COOP, live: true, active: true })).toEqual({
      coop_id: COOP,
      live: true,
      active: true,
    });
    expect(
      decodeFarmDoc(FARM, { total_hens: 3, days: { '7': 2, '1': 4, '2': 'x', '0.5': 1, x: 1, '3': 0 } }),
    ).toEqual({
      farm_id: FARM,
      farm_type: '',
      active_hens: 0,
      total_hens: 3,
      days: [1, 4, 7, 2],
    });
  });
});

describe('actor rules', () => {
  it('counts a hen in a live coop towards its farm and gives the hen the farm', () => {
    const m = new Memory();
    m.apply(entry('farm', FARM, 'create', farm()), entry('coop', COOP, 'create', coop(FARM)));
    m.apply(entry('hen', HEN, 'create', hen(COOP)), entry('hen', HEN2, 'create', hen(COOP, 'retired')));
    expect(m.doc('farm_output', FARM)).toMatchObject({
      farm_type: 'megafarm',
      total_hens: 2,
      active_hens: 1,
    });
    expect(m.coops.get(COOP)).toEqual({ farm_id: FARM, live: true, hens: 2, active: 1 });
    expect(m.doc('hen_productivity', HEN)).toMatchObject({ farm_id: FARM });
  });

  it('moves the counts and every hen when a coop moves to another farm', () => {
    const m = new Memory();
    m.apply(
      entry('farm', FARM, 'create', farm()),
      entry('farm', FARM2, 'create', farm('homestead')),
      entry('coop', COOP, 'create', coop(FARM)),
      entry('hen', HEN, 'create', hen(COOP)),
      entry('hen', HEN2, 'create', hen(COOP)),
    );
    // A later batch: the hens are only known through the committed ref index.
    m.apply(entry('coop', COOP, 'update', coop(FARM2), coop(FARM)));
    expect(m.doc('farm_output', FARM)).toMatchObject({ total_hens: 0, active_hens: 0 });
    expect(m.doc('farm_output', FARM2)).toMatchObject({
      farm_type: 'homestead',
      total_hens: 2,
      active_hens: 2,
    });
    expect(m.doc('hen_productivity', HEN)).toMatchObject({ farm_id: FARM2 });
    expect(m.doc('hen_productivity', HEN2)).toMatchObject({ farm_id: FARM2 });
  });

  it('disconnects the hens of a deleted coop and reconnects them when it comes back', () => {
    const m = new Memory();
    m.apply(entry('farm', FARM, 'create', farm()), entry('coop', COOP, 'create', coop(FARM)));
    m.apply(entry('hen', HEN, 'create', hen(COOP)));
    m.apply(entry('coop', COOP, 'delete', null, coop(FARM)));
    expect(m.doc('farm_output', FARM)).toMatchObject({ total_hens: 0 });
    expect(m.doc('hen_productivity', HEN)).toMatchObject({ farm_id: null });
    m.apply(entry('coop', COOP, 'create', coop(FARM)));
    expect(m.doc('farm_output', FARM)).toMatchObject({ total_hens: 1, active_hens: 1 });
    expect(m.doc('hen_productivity', HEN)).toMatchObject({ farm_id: FARM });
  });

  it('moves a hen between coops and keeps counts right for an update within one coop', () => {
    const m = new Memory();
    m.apply(
      entry('farm', FARM, 'create', farm()),
      entry('farm', FARM2, 'create', farm()),
      entry('coop', COOP, 'create', coop(FARM)),
      entry('coop', COOP2, 'create', coop(FARM2)),
      entry('hen', HEN, 'create', hen(COOP)),
    );
    m.apply(entry('hen', HEN, 'update', hen(COOP, 'retired'), hen(COOP)));
    expect(m.coops.get(COOP)).toMatchObject({ hens: 1, active: 0 });
    m.apply(entry('hen', HEN, 'update', hen(COOP2), hen(COOP, 'retired')));
    expect(m.coops.get(COOP)).toMatchObject({ hens: 0, active: 0 });
    expect(m.doc('farm_output', FARM2)).toMatchObject({ total_hens: 1, active_hens: 1 });
    expect(m.doc('hen_productivity', HEN)).toMatchObject({ farm_id: FARM2 });
    m.apply(entry('hen', HEN, 'delete', null, hen(COOP2)));
    expect(m.doc('farm_output', FARM2)).toMatchObject({ total_hens: 0, active_hens: 0 });
    expect(m.docs.get(foldKey('hen_productivity', HEN))?.live).toBe(false);
  });

  it("keeps a farm's counters when its type changes, and tombstones it on delete", () => {
    const m = new Memory();
    m.apply(entry('farm', FARM, 'create', farm()), entry('coop', COOP, 'create', coop(FARM)));
    m.apply(entry('hen', HEN, 'create', hen(COOP)));
    m.apply(entry('farm', FARM, 'update', farm('local_farm'), farm()));
    expect(m.doc('farm_output', FARM)).toMatchObject({ farm_type: 'local_farm', total_hens: 1 });
    m.apply(entry('farm', FARM, 'delete', null, farm('local_farm')));
    expect(m.docs.get(foldKey('farm_output', FARM))).toMatchObject({ live: false, doc: { total_hens: 1 } });
  });

  it("sets a container's capacity and utilization, and counts lay reports for hen and farm", () => {
    const m = new Memory();
    m.apply(
      entry('container', C1, 'create', { name: 'c', container_type: 'fridge', capacity: 20, zone: 'z' }),
    );
    m.apply(
      entry('storage_deposit', crypto.randomUUID(), 'create', {
        container_id: C1,
        eggs: 5,
        source_type: 'farm',
      }),
    );
    expect(m.doc('container_inventory', C1)).toMatchObject({
      capacity: 20,
      current_eggs: 5,
      utilization_pct: 25,
    });
    m.apply(entry('lay_report', crypto.randomUUID(), 'create', lay(4, new Date(T).toISOString())));
    expect(m.doc('hen_productivity', HEN)).toMatchObject({ total_eggs: 4, good_eggs: 4 });
    expect(m.doc('farm_output', FARM)).toMatchObject({ farm_id: FARM });
  });
});

describe('fold over a partly loaded view', () => {
  it('reports the keys it could not read, and completes once they are loaded', () => {
    const m = new Memory();
    m.apply(
      entry('farm', FARM, 'create', farm()),
      entry('coop', COOP, 'create', coop(FARM)),
      entry('coop', COOP2, 'create', coop(FARM2)),
      entry('hen', HEN, 'create', hen(COOP)),
    );
    const move = decodeEntry(entry('hen', HEN, 'update', hen(COOP2), hen(COOP)));
    if (move === null) throw new Error('undecodable');
    const keys = new KeySet();
    directKeys(move, keys);
    m.loaded = new Set([
      ...keys.keys().documents.map((k) => foldKey(k.entity, k.id)),
      ...keys.keys().state.map((k) => foldKey(k.kind, k.id)),
    ]);
    const first = fold(m, [move]);
    expect(first.complete).toBe(false);
    // The farms follow from the coops' loaded state only.
    const missing = first.complete ? [] : first.missing.keys().documents;
    expect(missing.map((d) => d.id).sort()).toEqual([FARM, FARM2].sort());
    for (const d of missing) m.loaded.add(foldKey(d.entity, d.id));
    const second = fold(m, [move]);
    expect(second.complete).toBe(true);
  });
});
