import {
  type CliOption,
  type CommandSpec,
  loadConfig,
  parseCommandLine,
  usageError,
} from '@eggmesh/service-kit';
import { economy, presets } from './economy.js';

const spec = {
  command: 'pnpm seed',
  summary:
    'Fills a running eggmesh with a realistic egg economy through the public REST API (farms, coops, hens,\ncontainers, consumers, then --days of lay reports, deposits, transfers, withdrawals and consumption).',
  options: {
    size: { type: 'string', value: 'small|medium|large', description: 'preset size (default small)' },
    farms: { type: 'string', value: 'N', description: "number of farms (default: the preset's)" },
    days: { type: 'string', value: 'N', description: "days of events (default: the preset's)" },
    seed: { type: 'string', value: 'N', description: 'random seed, same seed same economy (default 42)' },
    url: { type: 'string', value: 'URL', description: 'write-api base URL (default EGGMESH_WRITE_API_URL)' },
    chunk: { type: 'string', value: 'N', description: 'rows per bulk request (default 500)' },
  },
  config: 'seed',
} as const satisfies CommandSpec<Readonly<Record<string, CliOption>>>;

const values = parseCommandLine(spec);
const fail = (message: string): never => usageError(spec, message);
/** A failure while seeding (not a bad command line): the message alone, exit 1. */
const die = (message: string): never => {
  console.error(message);
  process.exit(1);
};
const whole = (value: string | undefined, name: string) => {
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : fail(`--${name} must be a whole number ≥ 1`);
};

const sizeName = values.size ?? 'small';
const preset = presets[sizeName as keyof typeof presets] ?? fail(`unknown --size ${sizeName}`);
const size = {
  ...preset,
  farms: whole(values.farms, 'farms') ?? preset.farms,
  days: whole(values.days, 'days') ?? preset.days,
};
const config = loadConfig('seed');
const base = (values.url ?? config.upstreams.write).replace(/\/$/, '');
const chunk = whole(values.chunk, 'chunk') ?? 500;

const batches = economy(size, whole(values.seed, 'seed') ?? 42, Date.now());
const total = batches.reduce((n, b) => n + b.rows.length, 0);
console.log(`seeding ${total.toLocaleString('en')} rows into ${base} …`);

const started = performance.now();
let written = 0;
let position = 0;
for (const { entity, rows } of batches) {
  const t0 = performance.now();
  for (let i = 0; i < rows.length; i += chunk) {
    const response = await fetch(`${base}/${entity}/api/bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rows.slice(i, i + chunk)),
    }).catch((error: unknown) =>
      die(`cannot reach ${base} (${String(error)}): is the stack running (pnpm start)?`),
    );
    if (response.status !== 201) die(`${entity}: ${response.status} ${await response.text()}`);
    position = Number(response.headers.get('x-log-position') ?? position);
    written += Math.min(chunk, rows.length - i);
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    `  ${entity.padEnd(20)} ${rows.length.toLocaleString('en').padStart(8)}  (${Math.round(rows.length / Math.max(seconds, 1e-3)).toLocaleString('en')}/s)  ${Math.round((written / total) * 100)}%`,
  );
}
const seconds = (performance.now() - started) / 1000;
console.log(
  `done: ${written.toLocaleString('en')} rows in ${seconds.toFixed(1)} s; log position ${position}.\n` +
    `Projections are current once the projector reaches it; ask the read-api with the header x-min-position: ${position}.`,
);
