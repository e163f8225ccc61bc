import { fileURLToPath } from 'node:url';
import { loadConfig } from '@eggmesh/service-kit';
import { kafkaServices } from './kafka-services.js';
import { type ServiceSpec, Supervisor } from './supervisor.js';

const config = loadConfig();
const script = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const url = (port: number) => `http://${config.host}:${port}`;

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
  {
    name: 'read-api',
    script: script('read-api/dist/server.js'),
    healthUrl: `${url(config.ports.read)}/health`,
  },
  { name: 'edge', script: script('edge/dist/server.js'), healthUrl: `${url(config.ports.edge)}/health` },
  // EGGMESH_LOG=kafka: the relay, and the local broker when the brokers are the local dev port.
  ...kafkaServices(config, script, url),
];

const supervisor = new Supervisor({
  services,
  env: { ...process.env, EGGMESH_DATA_DIR: config.dataDir },
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

supervisor.start();

/**
 * Waits until the service answers /health as itself: its name and the pid this supervisor started.
 * Another process on the same port (a second `pnpm start`) answers too, but not as ours.
 */
async function waitHealthy(name: string, target: string, deadline: number): Promise<boolean> {
  while (Date.now() < deadline && !stopping) {
    try {
      const response = await fetch(target, { signal: AbortSignal.timeout(1000) });
      const body: unknown = await response.json();
      if (
        response.ok &&
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

const deadline = Date.now() + 60_000;
const probed = services.filter((s): s is ServiceSpec & { healthUrl: string } => s.healthUrl !== undefined);
const health = await Promise.all(probed.map((s) => waitHealthy(s.name, s.healthUrl, deadline)));
if (!stopping) {
  const edge = url(config.ports.edge);
  const down = probed.filter((_, i) => !health[i]).map((s) => s.name);
  process.stdout.write(
    [
      '',
      down.length === 0
        ? 'eggmesh is up (embedded tier: SQLite files, no servers).'
        : `not healthy yet: ${down.join(', ')}`,
      `  data        ${config.dataDir}`,
      `  REST        ${edge}/farm/api          (write-api ${url(config.ports.write)})`,
      `  GraphQL     ${edge}/graphql           (read-api ${url(config.ports.read)})`,
      `  GraphiQL    ${edge}/graphiql`,
      `  API docs    ${edge}/docs`,
      `  projector   ${url(config.ports.projector)}/metrics`,
      ...(config.log === 'kafka'
        ? [
            `  relay       ${url(config.ports.relay)}/metrics   (Kafka ${config.kafka.brokers.join(',')}, topic ${config.kafka.topic})`,
          ]
        : []),
      '  Fill it with a sample economy: pnpm seed   ·   stop: Ctrl-C',
      '',
    ].join('\n'),
  );
}
