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
    legacy: {
      type: 'boolean',
      description:
        'the legacy tier too (pnpm start:legacy): first start PostgreSQL with the SAP and Salesforce schemas, the Kafka broker and Kafka Connect with Debezium, then run the anti-corruption layer (legacy-sync, EGGMESH_LEGACY_SOURCE) beside the services; it registers the capture of its source',
    },
  },
});
// `--scaled` (pnpm start:scaled): the scaled tier, on servers this supervisor starts locally first.
if (flags.scaled) for (const [name, value] of Object.entries(scaledEnv)) process.env[name] ??= value;
// Read like every service reads it: unknown EGGMESH_* names warned about, bad values listed, exit 2.
const config = loadConfig('stack');
const infra = flags.scaled || flags.legacy ? infraServers(config, { legacy: flags.legacy }) : [];
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
  // `--legacy`: the anti-corruption layer writes the legacy source's changes through the write-api.
  ...(flags.legacy
    ? [{ name: 'legacy-sync', script: script('legacy-sync/dist/main.js'), port: config.legacy.port }]
    : []),
];
/** Ready means more than up for the layer: its connector runs and it consumes (its /ready says 200). */
const readyPaths: Record<string, string> = { 'legacy-sync': '/ready' };

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
      if (response.ok && body.service === spec.name && body.pid === supervisor.pids()[spec.name]) {
        const ready = readyPaths[spec.name];
        if (!ready) return true;
        const answer = await fetch(`${url(spec.port ?? 0)}${ready}`, { signal: AbortSignal.timeout(1000) });
        if (answer.ok) return true;
      }
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
const legacyTopics = `${config.legacy.topicPrefix}.${config.legacy.source}.*`;

// The layer is ready once a JVM (Kafka Connect) has started its connector: minutes on a busy machine.
const deadline = Date.now() + (flags.legacy ? 300_000 : 60_000);
const health = await Promise.all(services.map((s) => waitHealthy(s, deadline)));
if (!stopping) {
  const base = url(config.ports.read);
  const down = services.filter((_, i) => !health[i]).map((s) => s.name);
  process.stdout.write(
    [
      '',
      down.length === 0
        ? `eggmesh is up (${tier()}${flags.legacy ? `; legacy tier: ${config.legacy.source} → Debezium → legacy-sync` : ''}).`
        : `not healthy yet: ${down.join(', ')}`,
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
      ...(flags.legacy
        ? [
            `  legacy-sync ${url(config.legacy.port)}/ready   (source ${config.legacy.source}: topics ${legacyTopics} → the write-api; metrics on /metrics)`,
            `  Fill the legacy tables: pnpm legacy:simulate --source ${config.legacy.source} --url ${infraEnv.EGGMESH_LEGACY_DB_URL} --rate 5 --changes 50`,
          ]
        : ['  Fill it with a sample economy: pnpm seed']),
      '  stop: Ctrl-C',
      '',
    ].join('\n'),
  );
}
