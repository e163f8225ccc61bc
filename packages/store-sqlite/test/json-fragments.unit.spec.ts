import type { JsonListField } from '@eggmesh/store';
import { describe, expect, it } from 'vitest';
import { type FragmentRow, JsonFragments } from '../src/json-fragments.js';

const fields: readonly JsonListField[] = [{ key: 'id', source: 'id', type: 'id', nullable: false }];
const other: readonly JsonListField[] = [{ key: 'name', source: 'name', type: 'string', nullable: false }];

/** A fragment builder that records which versions it was asked for. */
function builder(pad = 0) {
  const asked: number[][] = [];
  const build = (seqs: number[]): FragmentRow[] => {
    asked.push(seqs);
    return seqs.map((seq) => [seq, JSON.stringify({ id: `r${String(seq).padStart(pad, '0')}` }), 10]);
  };
  return { asked, build };
}

describe('JsonFragments', () => {
  it('builds only the versions it does not hold, per selection, and answers in the order asked', () => {
    const cache = new JsonFragments(10_000);
    const { asked, build } = builder();
    expect(cache.list('farm', fields, [3, 1], build).json).toBe('[{"id":"r3"},{"id":"r1"}]');
    expect(cache.list('farm', fields, [1, 2, 3], build)).toEqual({
      json: '[{"id":"r1"},{"id":"r2"},{"id":"r3"}]',
      rows: 3,
      payloadBytes: 30,
      conforming: true,
    });
    // Another selection of a version held is built once, beside the first.
    cache.list('farm', other, [1], build);
    cache.list('farm', other, [1], build);
    expect(asked).toEqual([[3, 1], [2], [1]]);
    expect(cache.size.entries).toBe(3);
  });

  it('refuses a list with a row of another type, and remembers that it did', () => {
    const cache = new JsonFragments(10_000);
    const asked: number[][] = [];
    const build = (seqs: number[]): FragmentRow[] => {
      asked.push(seqs);
      return seqs.map((seq) => [seq, seq === 2 ? null : `{"id":"r${seq}"}`, 10]);
    };
    expect(cache.list('farm', fields, [1, 2], build).conforming).toBe(false);
    expect(cache.list('farm', fields, [2], build).conforming).toBe(false);
    expect(asked).toEqual([[1, 2]]);
  });

  it('once full, keeps a version only from its second read; a new entity is not its own victim', () => {
    const fragment = '{"id":"r000000"}';
    // Room for 4 entries (64 bytes each beside the text).
    const cache = new JsonFragments(4 * (64 + fragment.length));
    const { asked, build } = builder(6);
    cache.list('farm', fields, [1, 2, 3, 4], build);
    expect(cache.size.entries).toBe(4);
    // 100,000 versions read once each: none kept, the first four stay.
    for (let seq = 10; seq < 100_010; seq++) cache.list('hen', fields, [seq], build);
    expect(cache.size.entries).toBe(4);
    asked.length = 0;
    cache.list('farm', fields, [1, 2, 3, 4], build);
    expect(asked).toEqual([]);
    // Read twice while remembered: kept in place of the oldest (of another entity, as hen has none).
    cache.list('hen', fields, [100_009], build);
    cache.list('hen', fields, [100_009], build);
    expect(asked).toEqual([[100_009]]);
    expect(cache.size.entries).toBe(4);
    cache.list('farm', fields, [1], build);
    expect(asked).toEqual([[100_009], [1]]);
  });
});
