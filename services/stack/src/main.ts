import { fileURLToPath } from 'node:url';
import {
  commonServiceEnv,
  loadConfig,
  parseCommandLine,
  withoutUnknownEnv,
} from '@eggmesh/service-kit/config';
import { infraServers, scaledEnv } from './infra.js';
import { httpGet, type ServiceSpec, Supervisor } from './supervisor.js';

const flags = parseCommandLine({
  command: 'pnpm start   (or: node services/stack/dist/main.js after pnpm build)',
  summary:
    'Runs the embedded stack: write-api, projector, read-api and edge as separate processes, their logs\nprefixed in this terminal; restarts a service that dies or stops answering /health. Ctrl-C stops them\nall. `pnpm start` first builds whatever changed. Every service gets this environment: each reads the\nvariables its own --help lists.',
  env: [
    ...commonServiceEnv,
    'WRITE_API_PORT',
    'READ_API_PORT',
    'PROJECTOR_PORT',
    'EDGE_PORT',
    'EDGE_NODE_PORT',
    'EGGMESH_FRONT_DOOR',
    'EGGMESH_HEALTH_PROBE_INTERVAL_MS',
    'EGGMESH_HEALTH_PROBE_TIMEOUT_MS',
    'EGGMESH_HEALTH_PROBE_FAILURES',
    'EGGMESH_DEV_MONGODB_PORT',
    'EGGMESH_LOG',
    'EGGMESH_KAFKA_BROKERS',
    'EGGMESH_KAFKA_TOPIC',
    'EGGMESH_DEV_KAFKA_PORT',
    'RELAY_PORT',
  ],
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
const env: NodeJS.ProcessEnv = { ...process.env };
// Read like every service reads it: unknown EGGMESH_* names warned about, bad values listed, exit 2.
const config = loadConfig();
const infra = flags.scaled ? infraServers(config) : [];
const infraEnv = Object.assign({}, ...infra.map((server) => server.serviceEnv)) as Record<string, string>;
const script = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const url = (port: number) => `http://${config.host}:${port}`;

// On SQLite the edge answers GraphQL in its own process (EGGMESH_EDGE_GRAPHQL=embedded, the default): it
// then also serves the read-api's app on READ_API_PORT, as the stack's read process, and no separate
// read-api runs (about 120 MiB of RSS less; see perf/README.md, round 4). The write and read sides stay
// separate processes.
const edgeIsReadApi = config.store === 'sqlite' && config.edgeGraphql === 'embedded';
const haproxy = config.frontDoor === 'haproxy';
/** The Node edge's port: behind HAProxy it has its own. */
const edgePort = haproxy ? config.ports.edgeNode : config.ports.edge;

// The write-api creates the data files; the others wait for them.
const services: ServiceSpec[] = [
  {
    name: 'write-api',
    script: script('write-api/dist/server.js'),
    healthUrl: `${url(config.ports.write)}/health`,
  },
  {
    name: 'projector',
    script: script('projector/dist/main.js'),
    healthUrl: `${url(config.ports.projector)}/health`,
  },
  ...(edgeIsReadApi
    ? []
    : [
        {
          name: 'read-api',
          script: script('read-api/dist/server.js'),
          healthUrl: `${url(config.ports.read)}/health`,
        },
      ]),
  {
    name: 'edge',
    script: script('edge/dist/server.js'),
    healthUrl: `${url(edgePort)}/health`,
    env: {
      ...(edgeIsReadApi ? { EGGMESH_EDGE_GRAPHQL: 'read-api' } : {}),
      ...(haproxy ? { EDGE_PORT: String(edgePort) } : {}),
    },
  },
  // EGGMESH_FRONT_DOOR=haproxy: HAProxy takes EDGE_PORT, routing by the edge's route table; its
  // /health is the Node edge's, reached through it.
  ...(haproxy
    ? [
        {
          name: 'front-door',
          script: script('edge/dist/haproxy-main.js'),
          healthUrl: `${url(config.ports.edge)}/health`,
        },
      ]
    : []),
  // EGGMESH_LOG=kafka: the relay publishes the primary's log to the topic the projector consumes.
  ...(config.log === 'kafka'
    ? [
        {
          name: 'relay',
          script: script('relay/dist/main.js'),
          healthUrl: `${url(config.ports.relay)}/health`,
        },
      ]
    : []),
];

const supervisor = new Supervisor({
  services: [...infra, ...services],
  // Unknown EGGMESH_* names (likely typos) were warned about above, once; the services would only warn
  // again, each, and ignore them too.
  env: {
    ...withoutUnknownEnv(env),
    ...infraEnv,
    EGGMESH_DATA_DIR: config.dataDir,
  },
  write: (line) => process.stdout.write(`${line}\n`),
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  healthProbe: config.healthProbe,
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
async function waitHealthy(name: string, target: string, deadline: number): Promise<boolean> {
  while (Date.now() < deadline && !stopping) {
    try {
      const response = await httpGet(target, 1000);
      const body: unknown = response && JSON.parse(response.body);
      if (
        response !== null &&
        response.status === 200 &&
        typeof body === 'object' &&
        body !== null &&
        'service' in body &&
        'pid' in body &&
        body.service === name &&
        body.pid === supervisor.pids()[name]
      ) {
        return true;
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

const deadline = Date.now() + 60_000;
const probed = services.filter((s): s is ServiceSpec & { healthUrl: string } => s.healthUrl !== undefined);
// Through HAProxy, /health is answered by the Node edge: that it is ours proves the route.
const health = await Promise.all(
  probed.map((s) => waitHealthy(s.name === 'front-door' ? 'edge' : s.name, s.healthUrl, deadline)),
);
if (!stopping) {
  const edge = url(config.ports.edge);
  const down = probed.filter((_, i) => !health[i]).map((s) => s.name);
  process.stdout.write(
    [
      '',
      down.length === 0 ? `eggmesh is up (${tier()}).` : `not healthy yet: ${down.join(', ')}`,
      `  data        ${config.dataDir}`,
      ...infra.map((server) => `  ${server.describe}`),
      `  REST        ${edge}/farm/api          (write-api ${url(config.ports.write)})`,
      `  GraphQL     ${edge}/graphql           (read-api ${url(config.ports.read)}${edgeIsReadApi ? ', served by the edge' : ''})`,
      ...(haproxy
        ? [
            `  front door  HAProxy on ${edge} (EGGMESH_FRONT_DOOR=haproxy), the Node edge behind it on ${url(edgePort)}`,
          ]
        : []),
      `  GraphiQL    ${edge}/graphiql`,
      `  API docs    ${edge}/docs`,
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
