import { describe, expect, it } from 'vitest';
import { idGenerator, uuidV7 } from '../src/ids.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The Unix time in ms a UUID v7 carries in its first 48 bits. */
const uuidTime = (id: string) => Number.parseInt(id.replace('-', '').slice(0, 12), 16);

describe('server-assigned ids', () => {
  it('a UUID v7 carries the given time in ms, the version 7 and the RFC 9562 variant', () => {
    for (const now of [0, 1, 1_795_768_968_692, 2 ** 48 - 1, 1_795_768_968_692.9]) {
      const id = uuidV7(now);
      expect(id).toMatch(UUID_V7);
      expect(uuidTime(id)).toBe(Math.floor(now));
    }
  });

  it('ids made later sort later, and ids made in the same millisecond all differ', () => {
    const times = [
      1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_255, 1_700_000_000_256, 1_800_000_000_000,
    ];
    const ids = times.map((t) => uuidV7(t));
    expect([...ids].sort()).toEqual(ids);
    const same = new Set(Array.from({ length: 100_000 }, () => uuidV7(1_700_000_000_000)));
    expect(same.size).toBe(100_000);
  });

  it('the generator takes its time from the clock it is given; version 4 is random', () => {
    let now = 1_750_000_000_000;
    const next = idGenerator(7, () => now++);
    expect(uuidTime(next())).toBe(1_750_000_000_000);
    expect(uuidTime(next())).toBe(1_750_000_000_001);
    const v4 = idGenerator(4, () => 0);
    const made = Array.from({ length: 1000 }, () => v4());
    for (const id of made) expect(id).toMatch(UUID_V4);
    expect(new Set(made).size).toBe(1000);
  });
});
