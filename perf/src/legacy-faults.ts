// `pnpm legacy:faults`: the legacy pipeline's fault matrix. Runs `pnpm start:legacy` (PostgreSQL, Kafka,
// Kafka Connect with Debezium, the stack, the anti-corruption layer) on free ports, lets the SAP
// generator write at a steady rate, and SIGKILLs the layer, Connect's JVM and Kafka's JVM in turn,
// several times each (the supervisor restarts each as it would any crash). Then the generator stops
// and the clean side must equal the legacy side: every row of client 100 one clean record, no record
// that is not a row, none twice, the eggs laid and every hen's status the same. Exit 0 when equal.
// Not part of `pnpm test` (it takes minutes); README "Legacy systems of record" names it.
import { parseArgs } from 'node:util';
import { SapSimulator, sapCleanView, sapLegacyView, viewDifferences, viewTotals } from '@eggmesh/legacy-sync';
import pg from 'pg';
import { startLegacyStack, type Victim } from './lib/legacy-stack.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    rate: { type: 'string', default: '10' },
    seed: { type: 'string', default: '1' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(
    [
      'usage: pnpm legacy:faults [--rounds N] [--rate N] [--seed N] [--keep]',
      '',
      'SIGKILLs the layer, Kafka Connect and the Kafka broker N times each (default 3), in turn, while the',
      'SAP generator makes --rate changes per second (default 10); then checks that the clean API equals',
      'the legacy tables (no loss, no duplicate). --keep keeps the data directory. Exit 0 when equal.',
      '',
    ].join('\n'),
  );
  process.exit(0);
}
const rounds = Number(values.rounds);
const rate = Number(values.rate);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const started = Date.now();
log('starting pnpm start:legacy on free ports…');
const stack = await startLegacyStack();
log(`up in ${Math.round((Date.now() - started) / 1000)} s; the public port is ${stack.urls.public}`);
const db = new pg.Client({ connectionString: stack.databaseUrl });
await db.connect();
// No unknown codes: bad data has its own tests; here every row must arrive.
const simulator = new SapSimulator(db, { seed: Number(values.seed), unknownCodeRate: 0 });
await simulator.fill({ farms: 3, coopsPerFarm: 2, hensPerCoop: 5, containers: 4, consumers: 3 });

let writing = true;
let changes = 0;
const generator = (async () => {
  const begun = Date.now();
  while (writing) {
    await simulator.step();
    changes++;
    const wait = begun + (changes * 1000) / rate - Date.now();
    if (wait > 0) await sleep(wait);
  }
})();

const kills: { victim: Victim; pid: number; back: number }[] = [];
let failed = false;
try {
  const order: Victim[] = ['layer', 'connect', 'broker'];
  for (let round = 1; round <= rounds; round++) {
    for (const victim of order) {
      // Some changes flow between two kills.
      await sleep(4000 + Math.floor(Math.random() * 4000));
      const pid = stack.pid(victim);
      if (pid === undefined) throw new Error(`no ${victim} process to kill`);
      process.kill(pid, 'SIGKILL');
      const killedAt = Date.now();
      let next = stack.pid(victim);
      while (next === undefined || next === pid) {
        if (Date.now() - killedAt > 300_000) throw new Error(`${victim} was not restarted within 300 s`);
        await sleep(200);
        next = stack.pid(victim);
      }
      kills.push({ victim, pid, back: Date.now() - killedAt });
      log(
        `round ${round}: SIGKILL ${victim} (pid ${pid}); restarted as ${next} after ${Date.now() - killedAt} ms`,
      );
    }
  }
  await sleep(3000);
  writing = false;
  await generator;
  log(`generator stopped after ${changes} changes (${JSON.stringify(simulator.counts)})`);

  // The pipeline drains: wait until the clean side equals the legacy side (or say what differs).
  const want = await sapLegacyView(db);
  const drainStart = Date.now();
  let diff: string[] = ['not compared yet'];
  while (diff.length > 0 && Date.now() - drainStart < 600_000) {
    diff = viewDifferences(
      want,
      await sapCleanView(stack.urls.public).catch(() => ({
        ids: {},
        eggsLaid: -1,
        henStatus: {},
        projections: {},
      })),
    );
    if (diff.length > 0) await sleep(2000);
  }
  const ready = (await (await fetch(`${stack.urls.layer}/ready`)).json()) as Record<string, unknown>;
  log(`drained in ${Math.round((Date.now() - drainStart) / 1000)} s after the generator stopped`);
  log(`legacy rows of client 100: ${JSON.stringify(viewTotals(want))}, eggs laid ${want.eggsLaid}`);
  log(`layer /ready: applied ${ready.applied}, parked ${ready.parked}, dead-lettered ${ready.deadLettered}`);
  if (diff.length > 0 || ready.parked !== 0 || ready.deadLettered !== 0) {
    failed = true;
    log(`NOT EQUAL:\n  ${diff.join('\n  ')}`);
  } else {
    log(
      `EQUAL: ${kills.length} SIGKILLs (${order.map((v) => `${kills.filter((k) => k.victim === v).length} ${v}`).join(', ')}), ${changes} changes; every row one record, none missing, none extra, none twice; farm output, hen productivity and container inventory equal SQL over the tables`,
    );
  }
} catch (error) {
  failed = true;
  log(`failed: ${(error as Error).message}`);
  writing = false;
  await generator.catch(() => undefined);
} finally {
  await db.end().catch(() => undefined);
  await stack.stop(values.keep || failed);
}
process.exitCode = failed ? 1 : 0;
