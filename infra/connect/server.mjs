// Starts eggmesh's change-data-capture worker: Kafka Connect in distributed mode with Debezium's
// PostgreSQL connector on its classpath (see pom.xml, ConnectLauncher.java), as a child process. Its
// connector configs, source offsets and statuses live in Kafka topics named after its group, so a
// worker restarted (or SIGKILLed and restarted) on the same group resumes from the last committed
// offset. Used by the legacy tests and by `pnpm start:legacy`. Types: server.d.mts.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../ports.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The worker's version line, for test names. */
export const serverName = 'Kafka Connect 4.3.0 (distributed) + Debezium PostgreSQL connector 3.6.1.Final';

/** Fetches the jars once (Maven) and answers their directory; fails saying what to install. */
export function ensureJars() {
  return new Promise((resolve, reject) => {
    execFile('bash', [join(here, 'fetch-jars.sh')], { timeout: 600_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(
          new Error(`eggmesh: cannot prepare the Kafka Connect worker: ${stderr.trim() || error.message}`),
        );
        return;
      }
      resolve(stdout.trim().split('\n').pop());
    });
  });
}

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
  const started = performance.now();
  const child = spawn('java', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const onOutput = (chunk) => {
    output = (output + chunk).slice(-16_384);
    options.onLog?.(chunk);
  };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const cleanup = () => {
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  };
  exited.then(cleanup);
  const url = `http://127.0.0.1:${port}`;

  let gone;
  exited.then(({ code, signal }) => {
    gone = `the Kafka Connect worker exited (${signal ?? code})\n${output}`;
  });
  const deadline = Date.now() + 240_000;
  for (;;) {
    if (gone) throw new Error(`eggmesh: ${gone}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`eggmesh: the Kafka Connect worker did not answer within 240 s\n${output}`);
    }
    try {
      const response = await fetch(`${url}/connectors`);
      if (response.ok) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const startMs = performance.now() - started;

  const stopWith = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
  };
  return {
    url,
    port,
    group,
    dataDir,
    pid: child.pid,
    startMs,
    /** Graceful stop (SIGTERM): the worker flushes its source offsets and leaves its group. */
    stop: () => stopWith('SIGTERM'),
    /** A crash (SIGKILL), for fault tests. */
    kill: () => stopWith('SIGKILL'),
    exited,
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
  process.stdout.write(
    `${serverName} at ${worker.url}, group ${worker.group} on ${brokers} (started in ${Math.round(worker.startMs)} ms)\n`,
  );
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void worker.stop());
  const { code, signal } = await worker.exited;
  process.exitCode = code === 0 || signal === 'SIGTERM' || code === 143 ? 0 : 1;
}
