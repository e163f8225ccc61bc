import { openBackend } from '@eggmesh/backends';
import { kafkajsClient, Relay } from '@eggmesh/log-kafka';
import { loadConfig, loggerOptions, parseCommandLine, serve } from '@eggmesh/service-kit';
import { buildApp } from './app.js';

parseCommandLine({
  command: 'node services/relay/dist/main.js',
  summary:
    "Publishes the primary's event log to a Kafka topic in log order (idempotent producer), for the\nprojector to consume with EGGMESH_LOG=kafka; serves /health, /ready and /metrics (lag in entries and\nms). The stack runs it when EGGMESH_LOG=kafka (`pnpm start:scaled`).",
  config: 'relay',
});
// The relay's composition root: the primary's log (read-only, from the backend EGGMESH_STORE names) →
// the Kafka topic, in log order (docs/architecture.md, "The event log on Kafka").
const config = loadConfig('relay');
const stop = new AbortController();
let running = false;

const backend = await openBackend(config, 'relay');
const primary = await backend.openPrimaryLog(stop.signal);
const client = kafkajsClient({
  brokers: config.kafka.brokers,
  topic: config.kafka.topic,
  durability: config.kafka.durability,
  clientId: 'eggmesh-relay',
});
let app: ReturnType<typeof buildApp> | undefined;
const relay = new Relay({
  source: primary.log,
  client,
  durability: config.kafka.durability,
  onLog: (level, message) => {
    if (app) app.log[level](message);
    else console.error(message);
  },
});
app = buildApp({
  config,
  relay,
  topic: config.kafka.topic,
  running: () => running,
  logger: loggerOptions(config, 'relay'),
});

running = true;
const loop = relay.run(stop.signal).finally(() => {
  running = false;
});
await serve(app, {
  port: config.ports.relay,
  config,
  onClose: async () => {
    stop.abort();
    await loop;
    await client.close();
    await primary.close();
  },
});
app.log.info({ topic: config.kafka.topic, brokers: config.kafka.brokers.join(',') }, 'relay running');
