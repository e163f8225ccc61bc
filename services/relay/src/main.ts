import { kafkajsClient, Relay } from '@eggmesh/log-kafka';
import { loadConfig, loggerOptions, serve } from '@eggmesh/service-kit';
import type { EventLog } from '@eggmesh/store';
import { openMongoPrimaryStore } from '@eggmesh/store-mongodb';
import { openPrimaryWhenCreated } from '@eggmesh/store-sqlite';
import { buildApp } from './app.js';

// The relay's composition root: the primary's log (read-only, as EGGMESH_STORE says) → the Kafka topic,
// in log order (docs/architecture.md, "The event log on Kafka").
const config = loadConfig();
const stop = new AbortController();
let running = false;

async function openPrimaryLog(): Promise<{ log: EventLog; close(): Promise<void> }> {
  if (config.store === 'mongodb') {
    const store = await openMongoPrimaryStore({
      uri: config.mongodb.uri,
      dbName: config.mongodb.dbName,
      readonly: true,
    });
    return { log: store.log, close: () => store.close() };
  }
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
