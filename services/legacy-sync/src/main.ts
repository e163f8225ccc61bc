import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, loggerOptions, parseCommandLine, serve } from '@eggmesh/service-kit';
import { buildApp } from './app.js';
import { registerCapture } from './capture.js';
import { salesforceMapping } from './salesforce.js';
import { sapMapping } from './sap.js';
import { LegacySync, type LegacySyncOptions } from './sync.js';

parseCommandLine({
  command: 'node services/legacy-sync/dist/main.js',
  summary:
    "The anti-corruption layer: consumes Debezium's change topics of one legacy source, maps each row\n(codes, dates, keys → UUIDv5 ids) and writes the clean record through the write-api; parks children\nuntil their parents land, dead-letters what it cannot map. Serves /health, /ready and /metrics.",
  config: 'legacy-sync',
});
// The layer's composition root: the source's mapping, Kafka, the write-api's URL, the state file.
const config = loadConfig('legacy-sync');
const mappings = { sap: sapMapping, salesforce: salesforceMapping } as const;
mkdirSync(config.dataDir, { recursive: true });
const options: LegacySyncOptions = {
  mapping: mappings[config.legacy.source],
  brokers: config.kafka.brokers.join(','),
  topicPrefix: config.legacy.topicPrefix,
  writeUrl: config.upstreams.write,
  stateFile: join(config.dataDir, `legacy-sync-${config.legacy.source}.db`),
  groupId: config.legacy.group,
  deadLetterTopic: config.legacy.deadLetterTopic,
  parkTtlMs: config.legacy.parkTtlMs,
};
let sync: LegacySync | undefined;
const { app, registry } = buildApp({
  config,
  status: () => sync?.status() ?? { running: false, applied: 0, parked: 0, deadLettered: 0, deadLetters: [] },
  logger: loggerOptions(config, 'legacy-sync'),
});
sync = new LegacySync({ ...options, registry });
await serve(app, { port: config.legacy.port, config, onClose: () => sync?.stop() });
// Where the deployment names Kafka Connect and the legacy database, the layer registers its source's
// capture itself, so one setting list describes the whole pipeline; /ready says 503 until it runs.
const { connectUrl, databaseUrl } = config.legacy;
if (connectUrl && databaseUrl) {
  const name = await registerCapture({
    connectUrl,
    databaseUrl,
    source: config.legacy.source,
    topicPrefix: config.legacy.topicPrefix,
  });
  app.log.info({ connector: name, connect: connectUrl }, 'change data capture running');
}
await sync.start();
app.log.info(
  { source: config.legacy.source, brokers: options.brokers, write: options.writeUrl },
  'legacy-sync running',
);
