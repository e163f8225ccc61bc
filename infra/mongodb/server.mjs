// Starts eggmesh's MongoDB-wire test server (mongo-java-server, see Launcher.java) as a child process.
// Used by the vitest global setup and meant for the supervisor of the scaled tier. Types: server.d.mts.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const READY = /^eggmesh-mongodb ready port=(\d+)/m;

/** The test server's version line, for test names. */
export const serverName = 'mongo-java-server 1.47.0';

/** Fetches the jars once (Maven) and answers their directory; fails saying what to install. */
export function ensureJars() {
  return new Promise((resolve, reject) => {
    execFile('bash', [join(here, 'fetch-jars.sh')], { timeout: 300_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(
          new Error(`eggmesh: cannot prepare the MongoDB test server: ${stderr.trim() || error.message}`),
        );
        return;
      }
      resolve(stdout.trim().split('\n').pop());
    });
  });
}

/**
 * Starts a server on 127.0.0.1. `port` 0 (the default) takes a free port; `dataDir` keeps the data in
 * `<dataDir>/mongodb.h2` (acknowledged writes survive a kill), otherwise it lives in memory.
 */
export async function start(options = {}) {
  const jars = await ensureJars();
  const args = [
    '-Xmx256m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Xshare:auto',
    '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
    // It warns once per declared secondary index that it ignores them (a known limit, documented in
    // docs/architecture.md): dozens of lines at every start that say nothing new.
    '-Dorg.slf4j.simpleLogger.log.de.bwaldvogel.mongo.backend.AbstractMongoDatabase=error',
    `-Deggmesh.oplog=${options.oplog === true}`,
    // Stdin stays open while this process lives: if it dies unannounced, the server stops too.
    '-Deggmesh.exitWithParent=true',
    '-cp',
    `${jars}/*`,
    join(here, 'Launcher.java'),
    String(options.port ?? 0),
  ];
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    args.push(join(options.dataDir, 'mongodb.h2'));
  }
  const started = performance.now();
  const child = spawn('java', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    // Keep the tail only: the library logs a stack trace per rejected write.
    stderr = (stderr + chunk).slice(-8192);
    options.onLog?.(chunk);
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const port = await new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`eggmesh: the MongoDB test server did not start within 60 s\n${stderr}`));
    }, 60_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = READY.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`eggmesh: cannot run java for the MongoDB test server: ${error.message}`));
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(
          `eggmesh: the MongoDB test server exited (${signal ?? code}) before it was ready\n${stderr}`,
        ),
      );
    });
  });
  const startMs = performance.now() - started;

  const stopWith = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  return {
    uri: `mongodb://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    startMs,
    /** Graceful stop (SIGTERM): the data file is closed cleanly. */
    stop: () => stopWith('SIGTERM'),
    /** A crash (SIGKILL), for fault tests. */
    kill: () => stopWith('SIGKILL'),
    exited,
  };
}

// `node infra/mongodb/server.mjs`: a local dev server on EGGMESH_DEV_MONGODB_PORT (default 27017)
// with its data in EGGMESH_DATA_DIR/mongodb (default ./data/mongodb) and its oplog on, so change
// streams wake the services as on a replica set; Ctrl-C stops it. `pnpm start:scaled` runs it.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const port = Number(process.env.EGGMESH_DEV_MONGODB_PORT ?? 27017);
  const dataDir = join(process.env.EGGMESH_DATA_DIR ?? './data', 'mongodb');
  const server = await start({ port, dataDir, oplog: true, onLog: (chunk) => process.stderr.write(chunk) });
  process.stdout.write(
    `${serverName} at ${server.uri}, data in ${dataDir} (started in ${Math.round(server.startMs)} ms)\n`,
  );
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void server.stop());
  const { code, signal } = await server.exited;
  process.exitCode = code === 0 || signal === 'SIGTERM' || code === 143 ? 0 : 1;
}
