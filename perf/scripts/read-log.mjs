// Reading a whole log the way a rebuild reads it (`readAheadLog()`: a thread reads the next batch while
// this thread takes the last), nothing else done with the entries (round 14).
// Usage (after `pnpm build`): node perf/scripts/read-log.mjs perf/.work/datasets/medium-s1/primary.db [batch]
// Prints the entries read, the wall time, the process's CPU time (every thread) and the time this
// thread was busy (event-loop utilization): what a rebuild's fold thread pays for its input.
import { openPrimaryStore } from '../../packages/store-sqlite/dist/index.js';

const [file, batchArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node perf/scripts/read-log.mjs <primary.db> [batch]');
  process.exit(2);
}
const batch = Number(batchArg ?? 5000);
const store = openPrimaryStore({ file, readonly: true });
const log = store.readAheadLog();
const started = performance.now();
const cpu = process.cpuUsage();
const loop = performance.eventLoopUtilization();
let after = 0;
let entries = 0;
for (;;) {
  const page = await log.read(after, batch);
  if (page.length === 0) break;
  entries += page.length;
  after = page[page.length - 1].position;
}
const used = process.cpuUsage(cpu);
const busy = performance.eventLoopUtilization(loop);
console.log(
  `entries ${entries}  wall ${(performance.now() - started).toFixed(0)} ms  ` +
    `cpu ${((used.user + used.system) / 1000).toFixed(0)} ms  this thread busy ${busy.active.toFixed(0)} ms`,
);
await log.close();
await store.close();
