import { entities, entityNames } from '@eggmesh/schema';
import { describe, expect, it } from 'vitest';
import { decodeEntry, emptyDocument, projectionNames, storedDocument } from '../src/index.js';
import { projections, registeredProjections } from '../src/registry.js';

const ID = '11111111-1111-4111-8111-111111111111';
const REF = Date.UTC(2026, 10, 22, 12);

// These hold for every registered projection, so a new one is checked without a new test.
describe('the projection registry', () => {
  it('lists one definition per catalogue projection, in catalogue order', () => {
    const catalogue = entityNames.filter((n) => entities[n].kind === 'projection');
    expect(projections.map((p) => p.name)).toEqual(catalogue);
    expect(projectionNames).toEqual(catalogue);
  });

  it("each empty document survives its stored form and materializes to a valid document keyed by the catalogue's projection key", () => {
    for (const p of registeredProjections) {
      const empty = p.empty(ID);
      expect(emptyDocument(p.name, ID)).toEqual(empty);
      expect(p.decode('', JSON.parse(JSON.stringify(storedDocument(empty))))).toEqual(empty);
      const doc = p.materialize(empty, REF);
      const key = entities[p.name].projectionKey;
      expect(key).toBeDefined();
      expect(doc.id).toBe(ID);
      expect(doc[key ?? '']).toBe(ID);
      expect(entities[p.name].schema.safeParse(doc).success).toBe(true);
    }
  });

  it('decodes an entry of every entity the log holds, and none of a projection', () => {
    for (const entity of entityNames) {
      const decoded = decodeEntry({
        position: 1,
        entity,
        id: ID,
        op: 'create',
        payload: {},
        previous: null,
        createdAt: REF,
      });
      if (entities[entity].kind === 'projection') expect(decoded).toBeNull();
      else expect(decoded).toMatchObject({ entity, id: ID, op: 'create', previous: null });
    }
  });
});
