// Evicting the oldest entry of a bounded cache, as a plain Map used as a queue and as AgedMap (round 10).
// Usage (after `pnpm build`): node perf/scripts/cache-eviction.mjs
// Each line: microseconds per (insert one key + evict the oldest), with the cache held at n entries.
import { AgedMap } from '../../packages/store-sqlite/dist/aged-map.js';

const ops = 200_000;

function mapAsQueue(n) {
  const map = new Map();
  for (let i = 0; i < n; i++) map.set(`k${i}`, i);
  for (let j = 0, next = n; j < ops; j++) {
    map.set(`k${next++}`, j);
    for (const key of map.keys()) {
      map.delete(key);
      break;
    }
  }
}

function aged(n) {
  const map = new AgedMap();
  for (let i = 0; i < n; i++) map.set(`k${i}`, i);
  for (let j = 0, next = n; j < ops; j++) {
    map.set(`k${next++}`, j);
    map.delete(map.oldest());
  }
}

for (const n of [1_000, 20_000, 200_000]) {
  const row = [];
  for (const [name, run] of [
    ['Map', mapAsQueue],
    ['AgedMap', aged],
  ]) {
    const started = performance.now();
    run(n);
    row.push(`${name} ${(((performance.now() - started) / ops) * 1000).toFixed(2)} µs`);
  }
  console.log(`n=${n}: ${row.join(', ')}`);
}
