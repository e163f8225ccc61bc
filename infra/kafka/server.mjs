// Starts eggmesh's Kafka test broker (Apache Kafka in KRaft mode, one node that is broker and
// controller, see KafkaLauncher.java) as a child process. Used by the vitest global setup, by tests
// that stop and start a broker of their own, and by the supervisor of the scaled dev stack.
// Types: server.d.mts.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepare, serveFromCommandLine, startChild } from '../child-server.mjs';
import { freePort } from '../ports.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const STARTED = /Kafka Server started/;

/** The broker's version line, for test names. */
export const serverName = 'Apache Kafka 3.9.1 (KRaft, single node)';

/** Fetches the jars once (Maven) and answers their directory; fails saying what to install. */
export const ensureJars = () =>
  prepare(join(here, 'fetch-jars.sh'), 'prepare the Kafka test broker', 300_000);

/** A KRaft cluster id: 16 random bytes, base64url without padding (what `StorageTool random-uuid` prints). */
function clusterId() {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function serverProperties({ port, controllerPort, logDir }) {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `log.dirs=${logDir}`,
    // One node: every internal topic has one replica; few partitions keep the first group join quick.
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=1',
    'group.initial.rebalance.delay.ms=0',
    'num.partitions=1',
    // Topics are created by their owners (the relay, the tests) with the admin client.
    'auto.create.topics.enable=false',
    '',
  ].join('\n');
}

const LOG4J = [
  'log4j.rootLogger=WARN, stdout',
  'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
  'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
  // The line start() waits for.
  'log4j.logger.kafka.server.KafkaRaftServer=INFO',
  '',
].join('\n');

/**
 * Starts a broker on 127.0.0.1. `port` 0 (the default) takes a free port; the controller listens on
 * `controllerPort` (default: port + 1 for a fixed port, a free one otherwise). `dataDir` keeps the
 * log directory there (formatted on first use, reused after); without it a fresh temporary
 * directory is formatted and removed when the broker stops.
 */
export async function start(options = {}) {
  const jars = await ensureJars();
  const port = options.port || (await freePort());
  const controllerPort = options.controllerPort || (options.port ? options.port + 1 : await freePort());
  const temporary = !options.dataDir;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'eggmesh-kafka-'));
  mkdirSync(dataDir, { recursive: true });
  const logDir = join(dataDir, 'kraft-logs');
  const propertiesFile = join(dataDir, 'server.properties');
  const log4jFile = join(dataDir, 'log4j.properties');
  writeFileSync(propertiesFile, serverProperties({ port, controllerPort, logDir }));
  if (!existsSync(log4jFile)) writeFileSync(log4jFile, LOG4J);
  // A formatted directory keeps its cluster id: a restart on it must present the same one.
  const clusterIdFile = join(dataDir, 'cluster.id');
  if (!existsSync(clusterIdFile)) writeFileSync(clusterIdFile, clusterId());
  const cluster = readFileSync(clusterIdFile, 'utf8').trim();

  const args = [
    `-Xmx${options.heap ?? '512m'}`,
    '-XX:+UseSerialGC',
    '-Djava.awt.headless=true',
    `-Dlog4j.configuration=file:${log4jFile}`,
    `-Dkafka.logs.dir=${join(dataDir, 'server-logs')}`,
    // Stdin stays open while this process lives: if it dies unannounced, the broker stops too.
    '-Deggmesh.exitWithParent=true',
    '-cp',
    `${jars}/*`,
    join(here, 'KafkaLauncher.java'),
    propertiesFile,
    cluster,
  ];
  const cleanup = () => {
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  };
  const server = await startChild({
    name: 'the Kafka test broker',
    command: 'java',
    args,
    ready: STARTED,
    timeoutMs: 120_000,
    stopTimeoutMs: 30_000,
    onLog: options.onLog,
  }).catch((error) => {
    cleanup();
    throw error;
  });
  server.exited.then(cleanup);
  return {
    brokers: `127.0.0.1:${port}`,
    port,
    controllerPort,
    dataDir,
    pid: server.child.pid,
    startMs: server.startMs,
    /** Graceful stop (SIGTERM): the broker shuts down cleanly and can restart on the same dataDir at once. */
    stop: () => server.stopWith('SIGTERM'),
    /** A crash (SIGKILL), for fault tests; a restart on the same dataDir then waits ~11 s for the old session. */
    kill: () => server.stopWith('SIGKILL'),
    exited: server.exited,
  };
}

// `node infra/kafka/server.mjs`: a local dev broker on EGGMESH_DEV_KAFKA_PORT (default 9092, its
// controller on the next port) with its data in EGGMESH_DATA_DIR/kafka (default ./data/kafka);
// Ctrl-C stops it.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const port = Number(process.env.EGGMESH_DEV_KAFKA_PORT ?? 9092);
  const dataDir = join(process.env.EGGMESH_DATA_DIR ?? './data', 'kafka');
  const server = await start({ port, dataDir, onLog: (chunk) => process.stderr.write(chunk) });
  await serveFromCommandLine(
    server,
    `${serverName} at ${server.brokers}, data in ${dataDir} (started in ${Math.round(server.startMs)} ms)`,
  );
}
