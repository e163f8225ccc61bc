import { describe, expect, it } from 'vitest';
import { waitForPosition } from '../src/consistency.js';
import { type Positions, parseMinPosition } from '../src/index.js';

describe('parseMinPosition', () => {
  it('reads a non-negative integer, undefined when absent', () => {
    expect(parseMinPosition(undefined)).toBeUndefined();
    expect(parseMinPosition('0')).toBe(0);
    expect(parseMinPosition(' 42 ')).toBe(42);
    expect(parseMinPosition('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each(['', 'x', '-3', '1e3', '0x10', '1.0', '9007199254740993', ['1', '2']])('refuses %j', (value) => {
    expect(() => parseMinPosition(value)).toThrow(
      expect.objectContaining({ extensions: { code: 'EGGMESH_GRAPHQL_BAD_MIN_POSITION' } }),
    );
  });
});

describe('waitForPosition', () => {
  /** Positions that move on `step()`, which also wakes `changed()` like a store's change signal. */
  const moving = (from: number): Positions & { step(): void; looks: number } => {
    let at = from;
    const waiters = new Set<() => void>();
    const store = {
      looks: 0,
      replicaPosition: async () => {
        store.looks++;
        return at;
      },
      projectionPosition: async () => at,
      changed: (timeoutMs: number) =>
        new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            waiters.delete(done);
            resolve();
          };
          const timer = setTimeout(done, timeoutMs);
          waiters.add(done);
        }),
      step: () => {
        at++;
        for (const wake of [...waiters]) wake();
      },
    };
    return store;
  };

  it('returns as soon as both sides reach the position', async () => {
    const store = moving(5);
    expect(await waitForPosition(store, 5, 1000)).toEqual({
      requested: 5,
      replica: 5,
      projections: 5,
      stale: false,
      served: 'replica',
    });
    const timer = setInterval(() => store.step(), 5);
    const result = await waitForPosition(store, 8, 1000);
    clearInterval(timer);
    expect(result.stale).toBe(false);
    expect(result.replica).toBeGreaterThanOrEqual(8);
  });

  it("sleeps on the store's change signal instead of polling the positions", async () => {
    const store = moving(5);
    setTimeout(() => store.step(), 40);
    const result = await waitForPosition(store, 6, 5000);
    expect(result).toMatchObject({ replica: 6, stale: false });
    // One look before the wait, one after the wake (a 3 ms poll would have looked about 13 times).
    expect(store.looks).toBe(2);
  });

  it('gives up after the bound and says so', async () => {
    const started = performance.now();
    expect(await waitForPosition(moving(1), 2, 20)).toEqual({
      requested: 2,
      replica: 1,
      projections: 1,
      stale: true,
      served: 'replica',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(19);
  });
});
