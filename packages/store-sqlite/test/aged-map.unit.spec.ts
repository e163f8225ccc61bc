import { describe, expect, it } from 'vitest';
import { AgedMap, dropOldest, SecondSight } from '../src/aged-map.js';

/** A small seeded PRNG (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('AgedMap', () => {
  it('names the entry set longest ago; setting a key again makes it the newest', () => {
    const map = new AgedMap<string, number>();
    expect(map.oldest()).toBeUndefined();
    map.set('a', 1).set('b', 2).set('c', 3);
    expect(map.oldest()).toBe('a');
    map.set('a', 10);
    expect(map.oldest()).toBe('b');
    map.delete('b');
    expect(map.oldest()).toBe('c');
    expect(map.get('a')).toBe(10);
    expect(map.size).toBe(2);
    map.clear();
    expect(map.oldest()).toBeUndefined();
    expect(map.size).toBe(0);
  });

  it('agrees with a plain ordered model over random sets, deletes and evictions', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const next = random(seed);
      const map = new AgedMap<number, number>();
      // The model: keys in the order they were last set.
      let model: Array<[number, number]> = [];
      for (let step = 0; step < 5_000; step++) {
        const key = Math.floor(next() * 200);
        const roll = next();
        if (roll < 0.6) {
          map.set(key, step);
          model = model.filter(([k]) => k !== key);
          model.push([key, step]);
          // The order records stay bounded by the live entries, whatever the churn (deletes add none).
          expect(map.queued).toBeLessThanOrEqual(2 * map.size + 32);
        } else if (roll < 0.8) {
          expect(map.delete(key)).toBe(model.some(([k]) => k === key));
          model = model.filter(([k]) => k !== key);
        } else {
          const oldest = map.oldest();
          expect(oldest).toBe(model[0]?.[0]);
          if (oldest !== undefined) {
            map.delete(oldest);
            model.shift();
          }
        }
        expect(map.size).toBe(model.length);
      }
      for (const [key, value] of model) expect(map.get(key)).toBe(value);
    }
  });

  it('keeps its order records bounded when nothing is ever evicted (keys set again and again)', () => {
    const map = new AgedMap<string, number>();
    for (let i = 0; i < 100_000; i++) map.set(`k${i % 10}`, i);
    expect(map.size).toBe(10);
    expect(map.queued).toBeLessThanOrEqual(2 * 10 + 32);
    expect(map.oldest()).toBe('k0');
  });
});

describe('dropOldest', () => {
  it('drops from the first part first, then from the next ones in turn, until within bounds', () => {
    const hens = new AgedMap<string, number>().set('h1', 1).set('h2', 1).set('h3', 1);
    const farms = new AgedMap<string, number>().set('f1', 1).set('f2', 1);
    let size = 5;
    const dropped: string[] = [];
    const drop = (part: AgedMap<string, number>, key: string) => {
      part.delete(key);
      dropped.push(key);
      size -= 1;
    };
    dropOldest(
      [farms, hens, farms],
      (part) => part,
      () => size > 2,
      drop,
    );
    expect(dropped).toEqual(['f1', 'f2', 'h1']);
    expect(['h2', 'h3'].every((k) => hens.has(k))).toBe(true);
    dropOldest(
      [hens],
      (part) => part,
      () => size > 2,
      drop,
    );
    expect(dropped).toHaveLength(3);
  });
});

describe('SecondSight', () => {
  it('says yes on the second sight of a key while remembered, per part, and forgets within its bounds', () => {
    const admission = new SecondSight<string, string>(4, 40);
    expect(admission.again('hen', 'a')).toBe(false);
    expect(admission.again('coop', 'a')).toBe(false);
    expect(admission.again('hen', 'a')).toBe(true);
    // Said once: forgotten again.
    expect(admission.again('hen', 'a')).toBe(false);
    for (const key of ['b', 'c']) admission.again('hen', key);
    expect(admission.remembered.keys).toBe(4);
    // The fifth key forgets everything first.
    admission.again('hen', 'e');
    expect(admission.remembered).toEqual({ keys: 1, chars: 1 });
    expect(admission.again('coop', 'a')).toBe(false);
    // Long keys count by their characters; one over the whole budget is never remembered.
    admission.again('hen', 'x'.repeat(30));
    expect(admission.remembered.chars).toBe(32);
    admission.again('hen', 'y'.repeat(20));
    expect(admission.remembered).toEqual({ keys: 1, chars: 20 });
    expect(admission.again('hen', 'z'.repeat(41))).toBe(false);
    expect(admission.again('hen', 'z'.repeat(41))).toBe(false);
    expect(admission.remembered.chars).toBeLessThanOrEqual(40);
  });
});
