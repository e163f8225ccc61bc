import { describe, expect, it } from 'vitest';
import {
  type CommittedView,
  type DocOf,
  emptyDocument,
  FoldBatch,
  type HenState,
  type ProjectionName,
  type StateKind,
  type StateOf,
  storedDocument,
  type Versioned,
} from '../src/index.js';

const farmDoc = (id: string, total_hens: number) => ({
  ...emptyDocument('farm_output', id),
  total_hens,
  days: [20_400, total_hens + 1, 20_401, 7],
});
const henAt = (coop_id: string | null): HenState => ({ coop_id, live: true, active: true });

/** Committed: farms f1 (live) and f2 (a tombstone); hens h1, h2 in c1 and h3 in c2. */
class Committed implements CommittedView {
  readonly farms = new Map([
    ['f1', { doc: farmDoc('f1', 2), live: true }],
    ['f2', { doc: farmDoc('f2', 0), live: false }],
  ]);
  readonly hens = new Map([
    ['h1', henAt('c1')],
    ['h2', henAt('c1')],
    ['h3', henAt('c2')],
  ]);
  document<N extends ProjectionName>(entity: N, id: string): Versioned<DocOf[N]> | null | undefined {
    const farms: Map<string, Versioned<DocOf[ProjectionName]>> = this.farms;
    return entity === 'farm_output' ? ((farms.get(id) as Versioned<DocOf[N]> | undefined) ?? null) : null;
  }
  state<K extends StateKind>(kind: K, id: string): StateOf[K] | null | undefined {
    const hens: Map<string, StateOf[StateKind]> = this.hens;
    return kind === 'hen' ? ((hens.get(id) as StateOf[K] | undefined) ?? null) : null;
  }
  hensIn(coopId: string): readonly string[] {
    return [...this.hens].filter(([, h]) => h.coop_id === coopId).map(([id]) => id);
  }
}

describe('FoldBatch (the overlay a fold writes into)', () => {
  it('reads committed documents (tombstones too) and its own writes; a write at the same time replaces', () => {
    const committed = new Committed();
    const batch = new FoldBatch(committed);
    expect(batch.document('farm_output', 'f1')).toEqual({ doc: farmDoc('f1', 2), live: true });
    expect(batch.document('farm_output', 'f2')?.live).toBe(false);
    expect(batch.document('farm_output', 'nope')).toBeNull();
    batch.putDocument('farm_output', 'f1', farmDoc('f1', 3), true, 20);
    batch.putDocument('farm_output', 'f2', farmDoc('f2', 1), false, 20);
    batch.putDocument('farm_output', 'f1', farmDoc('f1', 4), true, 20);
    batch.putDocument('farm_output', 'f1', farmDoc('f1', 5), false, 21);
    expect(batch.document('farm_output', 'f1')).toEqual({ doc: farmDoc('f1', 5), live: false });
    const writes = batch.documentWrites();
    expect(
      writes.map(({ entity, id, doc, live, createdAt }) => ({ entity, id, doc, live, createdAt })),
    ).toEqual([
      { entity: 'farm_output', id: 'f1', doc: farmDoc('f1', 4), live: true, createdAt: 20 },
      { entity: 'farm_output', id: 'f2', doc: farmDoc('f2', 1), live: false, createdAt: 20 },
      { entity: 'farm_output', id: 'f1', doc: farmDoc('f1', 5), live: false, createdAt: 21 },
    ]);
    // What a store writes: the stored form, as an object and as the same JSON text.
    for (const w of writes) {
      expect(w.payload).toEqual(storedDocument(w.doc));
      expect(JSON.parse(w.json)).toEqual(w.payload);
    }
    // The committed view is never written.
    expect(committed.farms.get('f1')?.doc.total_hens).toBe(2);
    expect(batch.missing.size).toBe(0);
  });

  it('lists the hens of a coop as of its own changes', () => {
    const batch = new FoldBatch(new Committed());
    const sorted = (ids: readonly string[]) => [...ids].sort();
    expect(sorted(batch.hensIn('c1'))).toEqual(['h1', 'h2']);
    batch.putState('hen', 'h1', henAt('c2'));
    batch.putState('hen', 'h4', henAt('c1'));
    batch.putState('hen', 'h3', henAt(null));
    expect(sorted(batch.hensIn('c1'))).toEqual(['h2', 'h4']);
    expect(sorted(batch.hensIn('c2'))).toEqual(['h1']);
    batch.putState('hen', 'h1', henAt('c1'));
    expect(sorted(batch.hensIn('c1'))).toEqual(['h1', 'h2', 'h4']);
    expect(batch.hensIn('c2')).toEqual([]);
    expect(batch.stateWrites().map((w) => [w.id, w.ref])).toEqual([
      ['h1', 'c1'],
      ['h4', 'c1'],
      ['h3', null],
    ]);
  });

  it('still lists a committed row it has only read, and writes nothing for it', () => {
    const batch = new FoldBatch(new Committed());
    expect(batch.state('hen', 'h2')).toEqual(henAt('c1'));
    expect([...batch.hensIn('c1')].sort()).toEqual(['h1', 'h2']);
    expect(batch.stateWrites()).toEqual([]);
  });

  it('records what the committed view could not answer', () => {
    const unloaded: CommittedView = {
      document: () => undefined,
      state: () => undefined,
      hensIn: () => undefined,
    };
    const batch = new FoldBatch(unloaded);
    expect(batch.document('hen_productivity', 'h1')).toBeNull();
    expect(batch.state('coop', 'c1')).toBeNull();
    expect(batch.hensIn('c1')).toEqual([]);
    expect(batch.missing.keys()).toEqual({
      documents: [{ entity: 'hen_productivity', id: 'h1' }],
      state: [{ kind: 'coop', id: 'c1' }],
      stateByRef: [{ kind: 'hen', ref: 'c1' }],
    });
  });
});
