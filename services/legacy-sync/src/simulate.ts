import { parseArgs } from 'node:util';
import pg from 'pg';
import { SalesforceSimulator } from './salesforce-simulator.js';
import { type LegacySimulator, SapSimulator } from './simulator.js';
import { applySchema, type Source, sources } from './sources.js';

const { values } = parseArgs({
  options: {
    source: { type: 'string', default: 'sap' },
    rate: { type: 'string', default: '10' },
    url: {
      type: 'string',
      default: process.env.EGGMESH_LEGACY_DB_URL ?? 'postgresql://postgres@127.0.0.1:5432/legacy',
    },
    seed: { type: 'string', default: '1' },
    changes: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(
    [
      'usage: pnpm legacy:simulate [--source sap|salesforce] [--rate N] [--url postgresql://...] [--seed N] [--changes N]',
      '',
      "Writes a source's tables as the legacy applications would: creates the schema, fills an empty database",
      'with an economy, then makes N changes per second (until Ctrl-C, or --changes in all).',
      '',
    ].join('\n'),
  );
  process.exit(0);
}
if (!sources.includes(values.source as Source)) {
  process.stderr.write(`eggmesh: --source ${values.source}: not one of ${sources.join(', ')}\n`);
  process.exit(2);
}
const source = values.source as Source;
const rate = Number(values.rate);
if (!(rate > 0)) {
  process.stderr.write('eggmesh: --rate must be a positive number of changes per second\n');
  process.exit(2);
}
const db = new pg.Client({ connectionString: values.url });
await db.connect();
await applySchema(db, source);
const simulator: LegacySimulator =
  source === 'sap'
    ? new SapSimulator(db, { seed: Number(values.seed) })
    : new SalesforceSimulator(db, { seed: Number(values.seed) });
const farms = source === 'sap' ? 'sap.zfarm_mstr' : 'salesforce.farm__c';
const existing = await db.query(`SELECT count(*)::int AS n FROM ${farms}`);
if (existing.rows[0].n > 0) {
  process.stderr.write(
    `eggmesh: the ${source} tables already hold data; this simulator fills an empty database\n`,
  );
  await db.end();
  process.exit(2);
}
await simulator.fill({ farms: 3, coopsPerFarm: 2, hensPerCoop: 5, containers: 4, consumers: 3 });
process.stdout.write(`filled: ${JSON.stringify(simulator.counts)}\n`);
let stopped = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    stopped = true;
  });
const limit = values.changes === undefined ? Number.POSITIVE_INFINITY : Number(values.changes);
const started = Date.now();
for (let made = 0; !stopped && made < limit; made++) {
  await simulator.step();
  const due = started + ((made + 1) * 1000) / rate;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
process.stdout.write(`changes: ${JSON.stringify(simulator.counts)}\n`);
await db.end();
