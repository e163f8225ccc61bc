import { fileURLToPath } from 'node:url';
import { loadConfig, parseCommandLine, withoutUnknownEnv } from '@eggmesh/service-kit/config';
import { infraServers, scaledEnv } from './infra.js';
import { type ServiceSpec, Supervisor } from './supervisor.js';

const flags = parseCommandLine({
  command: 'pnpm start   (or: node services/stack/dist/main.js after pnpm build)',
  summary:
    'Runs the stack: write-api, projector and read-api (the public port) as separate processes, their\nlogs prefixed in this terminal; restarts a service that crashes. Ctrl-C stops them all. `pnpm start`\nfirst builds whatever changed. Every service gets this environment: each reads the variables its own\n--help lists.',
  config: 'stack',
  options: {
    scaled: {
      type: 'boolean',
      description:
        'the scaled tier (pnpm start:scaled): first start the local MongoDB-wire server and Kafka broker, then run every service (and the relay) on them',
    },
  },
});
// `--scaled` (pnpm start:scaled): the scaled tier, on servers this supervisor starts locally first.
if (flags.scaled) for (const [name, value] of Object.entries(scaledEnv)) process.env[name] ??= value;
// Read like every service reads it: unknown EGGMESH_* names warned about, bad values listed, exit 2.
const config = loadConfig('stack');
const infra = flags.scaled ? infraServers(config) : [];
const infraEnv = Object.assign({}, ...infra.map((server) => server.serviceEnv)) as Record<string, string>;
const script = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const url = (port: number) => `http://${config.host}:${port}`;

// The write-api creates the data files; the others wait for them.
const services: ServiceSpec[] = [
  { name: 'write-api', script: script('write-api/dist/server.js'), port: config.ports.write },
  { name: 'projector', script: script('projector/dist/main.js'), port: config.ports.projector },
  { name: 'read-api', script: script('read-api/dist/server.js'), port: config.ports.read },
  // EGGMESH_LOG=kafka: the relay publishes the primary's log to the topic the projector consumes.
  ...(config.log === 'kafka'
    ? [{ name: 'relay', script: script('relay/dist/main.js'), port: config.ports.relay }]
    : []),
];

const supervisor = new Supervisor({
  services: [...infra, ...services],
  // Unknown EGGMESH_* names (likely typos) were warned about above, once; the services would only warn
  // again, each, and ignore them too.
  env: { ...withoutUnknownEnv(process.env), ...infraEnv, EGGMESH_DATA_DIR: config.dataDir },
  write: (line) => process.stdout.write(`${line}\n`),
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  color: process.stdout.isTTY,
  // A service that cannot start (its port is taken, its configuration is invalid) takes the stack down:
  // running without it would only look up.
  onGiveUp: (name, reason) => void giveUp(name, reason),
});

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`\n${signal}: stopping every service…\n`);
  await supervisor.stop();
  process.stdout.write('stopped.\n');
  process.exit(0);
};
async function giveUp(name: string, reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`\n${name} cannot start: ${reason}. Stopping every service.\n`);
  await supervisor.stop();
  process.exit(1);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));

await supervisor.start();

/**
 * Waits until the service answers /health as itself: its name and the pid this supervisor started.
 * Another process on the same port (a second `pnpm start`) answers too, but not as ours.
 */
async function waitHealthy(spec: ServiceSpec, deadline: number): Promise<boolean> {
  while (Date.now() < deadline && !stopping) {
    try {
      const response = await fetch(`${url(spec.port ?? 0)}/health`, { signal: AbortSignal.timeout(1000) });
      const body = (await response.json()) as { service?: unknown; pid?: unknown };
      if (response.ok && body.service === spec.name && body.pid === supervisor.pids()[spec.name]) return true;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

const kafkaBrokers = infraEnv.EGGMESH_KAFKA_BROKERS ?? config.kafka.brokers.join(',');

/** The tier in one phrase: where the data is stored and where the log is read from. */
function tier(): string {
  if (config.store === 'sqlite' && config.log === 'store') return 'embedded tier: SQLite files, no servers';
  const store =
    config.store === 'mongodb'
      ? `MongoDB at ${infraEnv.EGGMESH_MONGODB_URI ?? config.mongodb.uri}`
      : 'SQLite files';
  const log = config.log === 'kafka' ? `the log on Kafka at ${kafkaBrokers}` : 'the log in the store';
  return `scaled tier: ${store}, ${log}`;
}

const deadline = Date.now() + 60_000;
const health = await Promise.all(services.map((s) => waitHealthy(s, deadline)));
if (!stopping) {
  const base = url(config.ports.read);
  const down = services.filter((_, i) => !health[i]).map((s) => s.name);
  process.stdout.write(
    [
      '',
      down.length === 0 ? `eggmesh is up (${tier()}).` : `not healthy yet: ${down.join(', ')}`,
      `  data        ${config.dataDir}`,
      ...infra.map((server) => `  ${server.describe}`),
      `  REST        ${base}/farm/api          (writes forwarded to the write-api ${url(config.ports.write)})`,
      `  GraphQL     ${base}/graphql`,
      `  GraphiQL    ${base}/graphiql`,
      `  API docs    ${base}/docs`,
      `  projector   ${url(config.ports.projector)}/metrics`,
      ...(config.log === 'kafka'
        ? [
            `  relay       ${url(config.ports.relay)}/metrics   (Kafka ${kafkaBrokers}, topic ${config.kafka.topic})`,
          ]
        : []),
      '  Fill it with a sample economy: pnpm seed   ·   stop: Ctrl-C',
      '',
    ].join('\n'),
  );
}
