// Starts eggmesh's change-data-capture worker: Kafka Connect in distributed mode with Debezium's
// PostgreSQL connector on its classpath (see pom.xml, ConnectLauncher.java), as a child process. Its
// connector configs, source offsets and statuses live in Kafka topics named after its group, so a
// worker restarted (or SIGKILLed and restarted) on the same group resumes from the last committed
// offset. Used by the legacy tests and by `pnpm start:legacy`. Types: server.d.mts.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepare, serveFromCommandLine, startChild } from '../child-server.mjs';
import { freePort } from '../ports.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The worker's version line, for test names. */
export const serverName = 'Kafka Connect 4.3.0 (distributed) + Debezium PostgreSQL connector 3.6.1.Final';

/** Fetches the jars once (Maven) and answers their directory; fails saying what to install. */
export const ensureJars = () =>
  prepare(join(here, 'fetch-jars.sh'), 'prepare the Kafka Connect worker', 600_000);

function workerProperties({ brokers, port, group }) {
  return [
    `bootstrap.servers=${brokers}`,
    `group.id=${group}`,
    `listeners=http://127.0.0.1:${port}`,
    `rest.advertised.host.name=127.0.0.1`,
    `rest.advertised.port=${port}`,
    // Change events as plain JSON (no embedded schema): the anti-corruption layer reads them with kafkajs.
    'key.converter=org.apache.kafka.connect.json.JsonConverter',
    'value.converter=org.apache.kafka.connect.json.JsonConverter',
    'key.converter.schemas.enable=false',
    'value.converter.schemas.enable=false',
    // The worker's durable state: one replica each, for the single-node test broker.
    `config.storage.topic=${group}-configs`,
    `offset.storage.topic=${group}-offsets`,
    `status.storage.topic=${group}-status`,
    'config.storage.replication.factor=1',
    'offset.storage.replication.factor=1',
    'offset.storage.partitions=1',
    'status.storage.replication.factor=1',
    'status.storage.partitions=1',
    // Source offsets are flushed every second: after a crash at most this much is re-read (and the
    // layer's deterministic ids make the replay harmless).
    'offset.flush.interval.ms=1000',
    // The connector jars are on the classpath; no plugin directory to scan.
    'plugin.discovery=only_scan',
    'topic.creation.enable=true',
    'scheduled.rebalance.max.delay.ms=0',
    '',
  ].join('\n');
}

const LOG4J2 = [
  'status = warn',
  'appender.console.type = Console',
  'appender.console.name = STDERR',
  'appender.console.target = SYSTEM_ERR',
  'appender.console.layout.type = PatternLayout',
  'appender.console.layout.pattern = [%d] %p %m (%c)%n',
  'rootLogger.level = warn',
  'rootLogger.appenderRef.stderr.ref = STDERR',
  '',
].join('\n');

/**
 * Starts a worker against `brokers` with its REST API on 127.0.0.1 (`port` 0, the default, takes a free
 * one). `group` names the Connect cluster and its three state topics (default a fresh one per start:
 * pass the same group to resume). Resolves once the REST API answers.
 */
export async function start(options) {
  const jars = await ensureJars();
  const port = options.port || (await freePort());
  const group = options.group ?? `eggmesh-connect-${process.pid}-${Date.now().toString(36)}`;
  const temporary = !options.dataDir;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'eggmesh-connect-'));
  mkdirSync(dataDir, { recursive: true });
  const propertiesFile = join(dataDir, 'worker.properties');
  const log4jFile = join(dataDir, 'log4j2.properties');
  writeFileSync(propertiesFile, workerProperties({ brokers: options.brokers, port, group }));
  if (!existsSync(log4jFile)) writeFileSync(log4jFile, LOG4J2);
  const args = [
    `-Xmx${options.heap ?? '384m'}`,
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${log4jFile}`,
    '-Deggmesh.exitWithParent=true',
    '-cp',
    `${jars}/*`,
    join(here, 'ConnectLauncher.java'),
    propertiesFile,
  ];
  const cleanup = () => {
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const worker = await startChild({
    name: 'the Kafka Connect worker',
    command: 'java',
    args,
    // Ready once its REST API answers.
    probe: async () => (await fetch(`${url}/connectors`)).ok,
    timeoutMs: 240_000,
    stopTimeoutMs: 30_000,
    onLog: options.onLog,
  }).catch((error) => {
    cleanup();
    throw error;
  });
  worker.exited.then(cleanup);
  return {
    url,
    port,
    group,
    dataDir,
    pid: worker.child.pid,
    startMs: worker.startMs,
    /** Graceful stop (SIGTERM): the worker flushes its source offsets and leaves its group. */
    stop: () => worker.stopWith('SIGTERM'),
    /** A crash (SIGKILL), for fault tests. */
    kill: () => worker.stopWith('SIGKILL'),
    exited: worker.exited,
  };
}

// `node infra/connect/server.mjs`: a local dev worker (`pnpm start:legacy`) with its REST API on
// EGGMESH_DEV_CONNECT_PORT (default 8083), against EGGMESH_KAFKA_BROKERS (default 127.0.0.1:9092), in
// the Connect group `eggmesh-connect` (its state topics outlive the worker, so a restart resumes), its
// files in EGGMESH_DATA_DIR/connect; Ctrl-C stops it.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const port = Number(process.env.EGGMESH_DEV_CONNECT_PORT ?? 8083);
  const dataDir = join(process.env.EGGMESH_DATA_DIR ?? './data', 'connect');
  const brokers = process.env.EGGMESH_KAFKA_BROKERS ?? '127.0.0.1:9092';
  const worker = await start({
    port,
    brokers,
    group: 'eggmesh-connect',
    dataDir,
    onLog: (chunk) => process.stderr.write(chunk),
  });
  await serveFromCommandLine(
    worker,
    `${serverName} at ${worker.url}, group ${worker.group} on ${brokers} (started in ${Math.round(worker.startMs)} ms)`,
  );
}
