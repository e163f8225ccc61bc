// The crud-sequence's store work without HTTP (round 17): per farm, create → read → update → read →
// delete → read through the writable primary store, `group` sequences at a time (their commits then
// share one group-commit transaction, as concurrent requests do in the write-api).
// Usage (after `pnpm build`): node perf/scripts/write-path.mjs <data dir> [group] [sequences]
// The data directory holds `primary.db` (a dataset's); the run writes a copy of it in a temp directory.
// Prints µs of wall time and CPU (user, system; every thread of the process) per sequence, and the
// transactions and commits the store counted.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openPrimaryStore } from '../../packages/store-sqlite/dist/index.js';

const [dir, groupArg, sequencesArg] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node perf/scripts/write-path.mjs <data dir> [group] [sequences]');
  process.exit(2);
}
const group = Number(groupArg ?? 1);
const sequences = Number(sequencesArg ?? 20000);
const work = mkdtempSync(join(tmpdir(), 'eggmesh-write-path-'));
const file = join(work, 'primary.db');
const source = new Database(join(dir, 'primary.db'), { readonly: true });
await source.backup(file);
source.close();
const store = openPrimaryStore({ file });
const farm = (n) => ({ name: `farm ${n}`, farm_type: 'homestead', zone: 'central' });

async function sequence(n) {
  const id = randomUUID();
  await store.commit([{ op: 'create', entity: 'farm', id, payload: farm(n) }]);
  store.sync.get('farm', id);
  await store.commit([{ op: 'update', entity: 'farm', id, payload: { ...farm(n), name: 'v2' } }]);
  store.sync.get('farm', id);
  await store.commit([{ op: 'delete', entity: 'farm', id }]);
  store.sync.get('farm', id);
}
async function run(count) {
  for (let i = 0; i < count; i += group) {
    await Promise.all(Array.from({ length: group }, (_, k) => sequence(i + k)));
  }
}

await run(2000);
const cpu = process.cpuUsage();
const started = performance.now();
await run(sequences);
const used = process.cpuUsage(cpu);
const round = (x) => Math.round(x * 10) / 10;
console.log(
  JSON.stringify({
    group,
    usPerSequence: round(((performance.now() - started) * 1000) / sequences),
    cpuUserUs: round(used.user / sequences),
    cpuSystemUs: round(used.system / sequences),
    ...store.groupStats(),
  }),
);
await store.close();
rmSync(work, { recursive: true, force: true });
