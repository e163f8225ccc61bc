/** Deterministic, allocation-free hashing and random numbers (32-bit integer math only). */

/** murmur3's 32-bit finaliser: a bijection on uint32, so distinct inputs never collide. */
export function fmix32(input: number): number {
  let x = input >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** FNV-1a over a string, mixed with a seed. */
export function hashString(seed: number, text: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** A random source: `next()` in [0, 1). */
export interface Rng {
  next(): number;
  /** An integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
}

/** mulberry32: tiny, fast and good enough for synthetic data. */
export function mulberry32(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    chance: (p) => next() < p,
  };
}

/**
 * The integers 0 … n−1 in a random order (Fisher–Yates). The closed-loop latency measurements send
 * each request to every target in such an order: in a fixed (or rotating) one, a target always follows
 * the same other target, so its users always start their burst in the same place, first or last, and
 * that place alone moves an identical build's p50 by about 0.3 ms at 10 users.
 */
export function permutation(rng: Rng, n: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    const kept = order[i]!;
    order[i] = order[j]!;
    order[j] = kept;
  }
  return order;
}

const hex = (word: number): string => (word >>> 0).toString(16).padStart(8, '0');

/**
 * Deterministic UUIDs (RFC 9562 version 4 layout) for (seed, kind, index).
 * Each 32-bit word is a bijection of `index` for a fixed kind, so ids never repeat
 * within a kind; across kinds a clash needs all four words to collide (about 2^-116).
 */
export class IdSpace {
  readonly #salts: readonly [number, number, number, number];

  constructor(seed: number, kind: string) {
    this.#salts = [0, 1, 2, 3].map((i) => hashString(seed + i * 0x9e3779b9, kind)) as unknown as [
      number,
      number,
      number,
      number,
    ];
  }

  id(index: number): string {
    const [s0, s1, s2, s3] = this.#salts;
    const w0 = fmix32(index + s0);
    const w1 = (fmix32(index + s1) & 0xffff0fff) | 0x00004000;
    const w2 = (fmix32(index + s2) & 0x3fffffff) | 0x80000000;
    const w3 = fmix32(index + s3);
    const a = hex(w0);
    const b = hex(w1);
    const c = hex(w2);
    return `${a}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${hex(w3)}`;
  }
}

/** A random stream for one (seed, kind, index): values of one row never depend on other rows. */
export function rowRng(seed: number, kindSalt: number, index: number): Rng {
  return mulberry32(fmix32(fmix32(index + kindSalt) ^ seed));
}
