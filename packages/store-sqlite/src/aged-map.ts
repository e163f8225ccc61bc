interface Slot<V> {
  readonly value: V;
  /** When it was set: the queue's records of a key before this one are stale. */
  readonly ticket: number;
}

/**
 * A Map that can say which of its entries was set longest ago, in constant time (amortized), so a
 * bounded cache can drop its oldest entries cheaply however large it is.
 *
 * Why not a plain Map's own order: V8 keeps a deleted entry as a hole until the table is rebuilt, and
 * iteration walks over the holes, so "delete the first key" on a Map used as a queue costs time in
 * proportion to the holes before it: 21 µs per eviction at 20,000 entries and 47 µs at 200,000
 * (measured, node 20), where a cache of reads spends a few µs on everything else. Here the order is a
 * queue of (key, ticket) records beside the Map; a record whose key was set again or deleted since is
 * stale and skipped, and the queue is compacted once stale records outnumber the live ones.
 */
export class AgedMap<K, V> {
  private readonly slots = new Map<K, Slot<V>>();
  private keys: K[] = [];
  private tickets: number[] = [];
  private head = 0;
  private nextTicket = 0;

  get size(): number {
    return this.slots.size;
  }

  get(key: K): V | undefined {
    return this.slots.get(key)?.value;
  }

  has(key: K): boolean {
    return this.slots.has(key);
  }

  /** Sets `key`; it becomes the newest entry, whether it was there or not. */
  set(key: K, value: V): this {
    const ticket = this.nextTicket++;
    this.slots.set(key, { value, ticket });
    this.keys.push(key);
    this.tickets.push(ticket);
    // The records behind `head` (passed) count too: compaction frees them as well.
    if (this.keys.length > 2 * this.slots.size + 32) this.compact();
    return this;
  }

  delete(key: K): boolean {
    return this.slots.delete(key);
  }

  clear(): void {
    this.slots.clear();
    this.keys = [];
    this.tickets = [];
    this.head = 0;
  }

  /** The key of the entry set longest ago, or undefined when empty. */
  oldest(): K | undefined {
    while (this.head < this.keys.length) {
      const key = this.keys[this.head] as K;
      if (this.slots.get(key)?.ticket === this.tickets[this.head]) return key;
      this.head += 1;
    }
    this.keys = [];
    this.tickets = [];
    this.head = 0;
    return undefined;
  }

  /** Order records held, live or stale: at most 2 × size + 32 after any `set` (bounded memory). */
  get queued(): number {
    return this.keys.length;
  }

  /** Keeps only the live records, in order. */
  private compact(): void {
    const keys: K[] = [];
    const tickets: number[] = [];
    for (let i = this.head; i < this.keys.length; i++) {
      const key = this.keys[i] as K;
      if (this.slots.get(key)?.ticket === this.tickets[i]) {
        keys.push(key);
        tickets.push(this.tickets[i] as number);
      }
    }
    this.keys = keys;
    this.tickets = tickets;
    this.head = 0;
  }
}

/**
 * The eviction of the bounded caches here: while `over()` says the cache is past its bounds, drops the
 * oldest entry of the first part (the one just added to), then of each next part in turn. `drop` must
 * delete the key it is given from the part's map (and account for it).
 */
export function dropOldest<P, K>(
  parts: Iterable<P>,
  mapOf: (part: P) => AgedMap<K, unknown>,
  over: () => boolean,
  drop: (part: P, key: K) => void,
): void {
  for (const part of parts) {
    const map = mapOf(part);
    while (over()) {
      const key = map.oldest();
      if (key === undefined) break;
      drop(part, key);
    }
    if (!over()) return;
  }
}

/** Keys an admission remembers as seen once (all forgotten at once past this). */
export const SEEN_ONCE_KEYS = 65_536;
/** Characters of string keys it remembers at most (a memo key names every value of a batch). */
export const SEEN_ONCE_CHARS = 4 * 1024 * 1024;

/**
 * The admission rule of the bounded caches once full: an entry earns a place only on the second sight
 * of its key while that key is remembered. Reads that never come back (random keys over a table many
 * times a cache's budget) then keep nothing: kept until newer entries evicted them, each such entry
 * lived long enough for V8 to move it to the old generation and died there, and its eviction cost more
 * than its read. Keys are remembered per part (an entity), up to `maxKeys` and `maxChars` of string
 * keys in all, then all forgotten at once.
 */
export class SecondSight<P, K extends string | number> {
  private readonly seen = new Map<P, Set<K>>();
  private count = 0;
  private chars = 0;

  constructor(
    private readonly maxKeys = SEEN_ONCE_KEYS,
    private readonly maxChars = SEEN_ONCE_CHARS,
  ) {}

  /** True when `key` of `part` was seen once before and is still remembered (then forgotten); else remembers it. */
  again(part: P, key: K): boolean {
    let keys = this.seen.get(part);
    if (keys === undefined) {
      keys = new Set();
      this.seen.set(part, keys);
    }
    const chars = typeof key === 'string' ? key.length : 0;
    if (keys.delete(key)) {
      this.count -= 1;
      this.chars -= chars;
      return true;
    }
    if (this.count >= this.maxKeys || this.chars + chars > this.maxChars) {
      for (const known of this.seen.values()) known.clear();
      this.count = 0;
      this.chars = 0;
    }
    // A key longer than the whole budget is never remembered: it is never kept either.
    if (chars > this.maxChars) return false;
    keys.add(key);
    this.count += 1;
    this.chars += chars;
    return false;
  }

  /** Keys and characters of string keys remembered now (tests: bounded). */
  get remembered(): { readonly keys: number; readonly chars: number } {
    return { keys: this.count, chars: this.chars };
  }
}
