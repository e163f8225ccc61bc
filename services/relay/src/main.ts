import { kafkajsClient, Relay } from '@eggmesh/log-kafka';
import {
  commonServiceEnv,
  connectLog,
  loadConfig,
  loggerOptions,
  parseCommandLine,
  serve,
} from '@eggmesh/service-kit';
import type { EventLog } from '@eggmesh/store';
import { buildApp } from './app.js';

parseCommandLine({
  command: 'node services/relay/dist/main.js',
  summary:
    "Publishes the primary's event log to a Kafka topic in log order (idempotent producer), for the\nprojector to consume with EGGMESH_LOG=kafka; serves /health, /ready and /metrics (lag in entries and\nms). The stack runs it when EGGMESH_LOG=kafka (`pnpm start:scaled`).",
  env: [...commonServiceEnv, 'RELAY_PORT', 'EGGMESH_KAFKA_BROKERS', 'EGGMESH_KAFKA_TOPIC'],
});
// The relay's composition root: the primary's log (read-only, as EGGMESH_STORE says) → the Kafka topic,
// in log order (docs/architecture.md, "The event log on Kafka"). Only the chosen store's adapter loads.
const config = loadConfig();
const stop = new AbortController();
let running = false;

async function openPrimaryLog(): Promise<{ log: EventLog; close(): Promise<void> }> {
  if (config.store === 'mongodb') {
    const { connectingMongoEventLog } = await import('@eggmesh/store-mongodb');
    const { uri, dbName } = config.mongodb;
    // Connecting in the background: the relay answers /health at once and retries until MongoDB answers.
    const log = connectingMongoEventLog({ uri, dbName }, connectLog('relay', `MongoDB at ${uri}`));
    return { log, close: () => log.close() };
  }
  const { openPrimaryWhenCreated } = await import('@eggmesh/store-sqlite');
  const store = await openPrimaryWhenCreated(config.dataDir, (m) => console.error(m), stop.signal);
  return { log: store.log, close: () => store.close() };
}

const primary = await openPrimaryLog();
const client = kafkajsClient({
  brokers: config.kafka.brokers,
  topic: config.kafka.topic,
  clientId: 'eggmesh-relay',
});
let app: ReturnType<typeof buildApp> | undefined;
const relay = new Relay({
  source: primary.log,
  client,
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
