// Starts eggmesh's MongoDB-wire test server (mongo-java-server, see Launcher.java) as a child process.
// Used by the vitest global setup and meant for the supervisor of the scaled tier. Types: server.d.mts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepare, serveFromCommandLine, startChild } from '../child-server.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const READY = /^eggmesh-mongodb ready port=(\d+)/m;

/** The test server's version line, for test names. */
export const serverName = 'mongo-java-server 1.47.0';

/** Fetches the jars once (Maven) and answers their directory; fails saying what to install. */
export const ensureJars = () =>
  prepare(join(here, 'fetch-jars.sh'), 'prepare the MongoDB test server', 300_000);

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
  const server = await startChild({
    name: 'the MongoDB test server',
    command: 'java',
    args,
    ready: READY,
    timeoutMs: 60_000,
    onLog: options.onLog,
  });
  const port = Number(server.match[1]);
  return {
    uri: `mongodb://127.0.0.1:${port}`,
    port,
    pid: server.child.pid,
    startMs: server.startMs,
    /** Graceful stop (SIGTERM): the data file is closed cleanly. */
    stop: () => server.stopWith('SIGTERM'),
    /** A crash (SIGKILL), for fault tests. */
    kill: () => server.stopWith('SIGKILL'),
    exited: server.exited,
  };
}

// `node infra/mongodb/server.mjs`: a local dev server on EGGMESH_DEV_MONGODB_PORT (default 27017)
// with its data in EGGMESH_DATA_DIR/mongodb (default ./data/mongodb) and its oplog on, so change
// streams wake the services as on a replica set; Ctrl-C stops it. `pnpm start:scaled` runs it.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const port = Number(process.env.EGGMESH_DEV_MONGODB_PORT ?? 27017);
  const dataDir = join(process.env.EGGMESH_DATA_DIR ?? './data', 'mongodb');
  const server = await start({ port, dataDir, oplog: true, onLog: (chunk) => process.stderr.write(chunk) });
  await serveFromCommandLine(
    server,
    `${serverName} at ${server.uri}, data in ${dataDir} (started in ${Math.round(server.startMs)} ms)`,
  );
}
