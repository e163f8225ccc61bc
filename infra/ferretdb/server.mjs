// Starts FerretDB (v1.24.2 on its SQLite backend, built from source by build.sh) as a child process: a
// second MongoDB-wire server, written by others, that the adapter's contract suites run on besides
// mongo-java-server. Used by the vitest global setup. Types: server.d.mts.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepare, startChild } from '../child-server.mjs';
import { freePort } from '../ports.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const LISTENING = /Listening on TCP 127\.0\.0\.1:(\d+)/;

/** The server's version line, for test names. */
export const serverName = 'FerretDB 1.24.2 (SQLite)';

/**
 * Builds the binary once (Go module source, cached) and answers its path; fails saying what to install.
 * The first build is minutes of CPU (12 min on a 2-core machine under a load of 15), hence the bound.
 */
export const ensureBinary = () => prepare(join(here, 'build.sh'), 'build FerretDB', 1_800_000);

/**
 * Starts a server on 127.0.0.1 with its SQLite files in `dataDir` (default: a fresh temporary directory,
 * removed at stop). `port` 0 (the default) lets the server take a free port and report it.
 */
export async function start(options = {}) {
  const binary = await ensureBinary();
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'eggmesh-ferretdb-'));
  mkdirSync(dataDir, { recursive: true });
  // A set member names its own address in `hello`, and FerretDB names the one it was told to listen on:
  // a set needs the port known before the start (port 0 would be reported as 0).
  const listenPort = options.port ?? (options.replSetName ? await freePort() : 0);
  const args = [
    '--handler=sqlite',
    `--sqlite-url=file:${dataDir}/`,
    `--state-dir=${dataDir}`,
    `--listen-addr=127.0.0.1:${listenPort}`,
    // No metrics listener (its default port would collide between runs) and no reports home.
    '--debug-addr=-',
    '--telemetry=disable',
    '--log-level=info',
    // A replica-set name the server reports in `hello` (it replicates nothing): what a client sees of a
    // set is then exercised against a server without transactions.
    ...(options.replSetName ? [`--repl-set-name=${options.replSetName}`] : []),
  ];
  // The server dies with the process that started it (a killed test run leaves no server behind).
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));
  const [command, argv] = setpriv ? [setpriv, ['--pdeathsig', 'KILL', binary, ...args]] : [binary, args];
  const removeData = () => {
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  };
  const server = await startChild({
    name: 'FerretDB',
    command,
    args: argv,
    ready: LISTENING,
    timeoutMs: 60_000,
    stdin: 'ignore',
    onLog: options.onLog,
  }).catch((error) => {
    removeData();
    throw error;
  });
  const port = Number(server.match[1]);
  const stopWith = async (signal) => {
    await server.stopWith(signal);
    removeData();
  };
  return {
    uri: `mongodb://127.0.0.1:${port}${options.replSetName ? `/?replicaSet=${options.replSetName}` : ''}`,
    port,
    pid: server.child.pid,
    startMs: server.startMs,
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
    exited: server.exited,
  };
}
