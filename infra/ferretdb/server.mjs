// Starts FerretDB (v1.24.2 on its SQLite backend, built from source by build.sh) as a child process: a
// second MongoDB-wire server, written by others, that the adapter's contract suites run on besides
// mongo-java-server. Used by the vitest global setup. Types: server.d.mts.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const LISTENING = /Listening on TCP 127\.0\.0\.1:(\d+)/;

/** The server's version line, for test names. */
export const serverName = 'FerretDB 1.24.2 (SQLite)';

/**
 * Builds the binary once (Go module source, cached) and answers its path; fails saying what to install.
 * The first build is minutes of CPU (12 min on a 2-core machine under a load of 15), hence the bound.
 */
export function ensureBinary() {
  return new Promise((resolve, reject) => {
    execFile('bash', [join(here, 'build.sh')], { timeout: 1_800_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`eggmesh: cannot build FerretDB: ${stderr.trim().slice(-2000) || error.message}`));
        return;
      }
      resolve(stdout.trim().split('\n').pop());
    });
  });
}

/**
 * Starts a server on 127.0.0.1 with its SQLite files in `dataDir` (default: a fresh temporary directory,
 * removed at stop). `port` 0 (the default) lets the server take a free port and report it.
 */
export async function start(options = {}) {
  const binary = await ensureBinary();
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'eggmesh-ferretdb-'));
  mkdirSync(dataDir, { recursive: true });
  const args = [
    '--handler=sqlite',
    `--sqlite-url=file:${dataDir}/`,
    `--state-dir=${dataDir}`,
    `--listen-addr=127.0.0.1:${options.port ?? 0}`,
    // No metrics listener (its default port would collide between runs) and no reports home.
    '--debug-addr=-',
    '--telemetry=disable',
    '--log-level=info',
  ];
  // The server dies with the process that started it (a killed test run leaves no server behind).
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));
  const [command, argv] = setpriv ? [setpriv, ['--pdeathsig', 'KILL', binary, ...args]] : [binary, args];
  const started = performance.now();
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`eggmesh: FerretDB did not start within 60 s\n${output}`));
    }, 60_000);
    const onData = (chunk) => {
      output = (output + chunk).slice(-8192);
      options.onLog?.(chunk);
      const match = LISTENING.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`eggmesh: cannot run FerretDB: ${error.message}`));
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`eggmesh: FerretDB exited (${signal ?? code}) before it was ready\n${output}`));
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
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    uri: `mongodb://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    startMs,
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
    exited,
  };
}
