// A coop's hens as one JSON list (`listJson`, what the read-api answers `hen getByCoop` with), through
// the read-only store as the read-api opens it, on random coops: the store's share of the scaling
// curve's filtered query, without HTTP or GraphQL (round 16).
// Usage (after `pnpm build`): node --expose-gc perf/scripts/list-json.mjs <data dir> [calls]
// The data directory holds `primary.db` (a dataset's, or a symlink to it). Prints µs and CPU µs per
// call, and the process's RSS and live heap after a full GC.
import Database from 'better-sqlite3';
import { openReadStore } from '../../packages/store-sqlite/dist/index.js';

const [dir, callsArg] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node --expose-gc perf/scripts/list-json.mjs <data dir> [calls]');
  process.exit(2);
}
const calls = Number(callsArg ?? 30000);
const file = new Database(`${dir}/primary.db`, { readonly: true });
const coops = file.prepare('SELECT id FROM coop_current').pluck().all();
file.close();
const store = openReadStore(dir);
const fields = [
  { key: 'id', source: 'id', type: 'id', nullable: false },
  { key: 'name', source: 'name', type: 'string', nullable: false },
  { key: 'breed', source: 'breed', type: 'string', nullable: true },
  { key: 'status', source: 'status', type: 'string', nullable: true },
  { key: 'coop_id', source: 'coop_id', type: 'id', nullable: false },
];
let rows = 0;
async function run(count) {
  for (let i = 0; i < count; i++) {
    const value = coops[Math.floor(Math.random() * coops.length)];
    const list = await store.listJson({
      entity: 'hen',
      fields,
      where: { field: 'coop_id', value },
      limit: 1000,
    });
    rows += list.rows;
  }
}
await run(2000);
const cpu = process.cpuUsage();
const started = performance.now();
await run(calls);
const micros = ((performance.now() - started) * 1000) / calls;
const used = process.cpuUsage(cpu);
globalThis.gc?.();
const memory = process.memoryUsage();
console.log(
  JSON.stringify({
    coops: coops.length,
    rowsPerCall: rows / (calls + 2000),
    usPerCall: Math.round(micros * 10) / 10,
    cpuUsPerCall: Math.round(((used.user + used.system) / calls) * 10) / 10,
    rssMiB: memory.rss >> 20,
    heapMiB: memory.heapUsed >> 20,
  }),
);
await store.close();
