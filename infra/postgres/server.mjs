// Starts the PostgreSQL server that holds eggmesh's legacy systems of record (the SAP-shaped and
// Salesforce-shaped replicas of docs/legacy.md) as a child process, with `wal_level=logical` so
// Debezium can read its changes. Used by the legacy tests and by `pnpm start:legacy`. Types: server.d.mts.
import { execFile, execFileSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from '../child-server.mjs';
import { freePort } from '../ports.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const READY = /database system is ready to accept connections/;

/** The superuser the project creates; trusted on 127.0.0.1 only. */
export const superuser = 'postgres';

/**
 * The directory of `initdb` and `postgres`: Debian keeps them in /usr/lib/postgresql/<major>/bin (the
 * newest major wins), other systems put them on PATH. Installs Debian's package where it can
 * (infra/ensure-tools.sh) and fails saying what to install.
 */
export function binDir() {
  const find = () => {
    const debian = '/usr/lib/postgresql';
    if (existsSync(debian)) {
      const majors = readdirSync(debian)
        .filter((name) => existsSync(join(debian, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a));
      if (majors.length > 0) return join(debian, majors[0], 'bin');
    }
    for (const dir of (process.env.PATH ?? '').split(':')) {
      if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) return dir;
    }
    return undefined;
  };
  let dir = find();
  if (!dir) {
    execFileSync('bash', [join(here, '..', 'ensure-tools.sh'), 'postgres'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    dir = find();
  }
  if (!dir) {
    throw new Error(
      'eggmesh: the legacy database needs PostgreSQL 15 or newer (Debian: apt-get install postgresql)',
    );
  }
  return dir;
}

/** The server's version line, for test names. */
export function serverName() {
  return execFileSync(join(binDir(), 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
}

/**
 * PostgreSQL refuses to run as root. As root (CI containers, this project's dev boxes), the server runs
 * as the `postgres` account Debian's package creates, and owns its data directory.
 */
function account() {
  if (process.geteuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', superuser], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', superuser], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error(
      `eggmesh: PostgreSQL does not run as root and there is no '${superuser}' account to run it as (useradd --system ${superuser})`,
    );
  }
}

function run(file, args, user) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: 120_000, ...(user ?? {}) }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`${file} ${args.join(' ')}: ${stderr.trim() || error.message}`))
        : resolve(stdout),
    );
  });
}

function settings({ port, socketDir, durable }) {
  return [
    "listen_addresses = '127.0.0.1'",
    `port = ${port}`,
    `unix_socket_directories = '${socketDir}'`,
    // Debezium's pgoutput connector reads the WAL through a logical replication slot.
    'wal_level = logical',
    'max_wal_senders = 8',
    'max_replication_slots = 8',
    'max_connections = 50',
    'shared_buffers = 32MB',
    // A temporary database is thrown away with its process: it need not survive a power cut.
    `fsync = ${durable ? 'on' : 'off'}`,
    `synchronous_commit = ${durable ? 'on' : 'off'}`,
    `full_page_writes = ${durable ? 'on' : 'off'}`,
    // LOG ranks above WARNING for the server log, so the ready line start() waits for is still logged.
    "log_min_messages = 'warning'",
    'log_min_error_statement = panic',
    "timezone = 'UTC'",
    '',
  ].join('\n');
}

/**
 * Starts a server on 127.0.0.1. `port` 0 (the default) takes a free port. `dataDir` keeps the cluster
 * there (initialised on first use, reused after); without it a fresh temporary cluster is made and
 * removed when the server stops.
 */
export async function start(options = {}) {
  const bin = binDir();
  const user = account();
  const port = options.port || (await freePort());
  const temporary = !options.dataDir;
  const root = options.dataDir ?? mkdtempSync(join(tmpdir(), 'eggmesh-postgres-'));
  mkdirSync(root, { recursive: true });
  const dataDir = join(root, 'cluster');
  if (user) chownSync(root, user.uid, user.gid);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    rmSync(dataDir, { recursive: true, force: true });
    await run(
      join(bin, 'initdb'),
      ['-D', dataDir, '-U', superuser, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
      user,
    );
  }
  writeFileSync(
    join(dataDir, 'postgresql.auto.conf'),
    settings({ port, socketDir: root, durable: !temporary }),
  );
  if (user) chownSync(join(dataDir, 'postgresql.auto.conf'), user.uid, user.gid);

  // A shell in between stops the server when this process's pipe closes (it died unannounced), so a
  // killed test run leaves no server behind: `postgres` itself does not watch its parent.
  // (A background job's stdin is /dev/null in sh, so the watcher reads the pipe through fd 3.)
  const script = [
    'exec 3<&0',
    '"$0" -D "$1" </dev/null &',
    'pid=$!',
    '( cat <&3 >/dev/null; kill -INT "$pid" 2>/dev/null ) &',
    'watch=$!',
    'wait "$pid"; code=$?',
    'kill "$watch" 2>/dev/null',
    'exit "$code"',
  ].join('\n');
  const cleanup = () => {
    if (temporary) rmSync(root, { recursive: true, force: true });
  };
  const server = await startChild({
    name: 'PostgreSQL',
    command: 'sh',
    args: ['-c', script, join(bin, 'postgres'), dataDir],
    ready: READY,
    timeoutMs: 120_000,
    // Closing the pipe stops the server through the shell's watcher.
    abort: (child) => child.stdin?.end(),
    uid: user?.uid,
    gid: user?.gid,
    onLog: options.onLog,
  }).catch((error) => {
    cleanup();
    throw error;
  });
  const { child, exited, startMs } = server;
  exited.then(cleanup);

  const postmasterPid = () => {
    try {
      return Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  };
  const serverPid = postmasterPid();
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    url: (database = 'postgres') => `postgresql://${superuser}@127.0.0.1:${port}/${database}`,
    host: '127.0.0.1',
    port,
    user: superuser,
    dataDir: root,
    pid: serverPid,
    startMs,
    /** Fast shutdown (SIGINT: open sessions end, the WAL is flushed); a restart on the same dataDir is quick. */
    async stop() {
      if (!running()) return;
      child.stdin.end();
      const timer = setTimeout(() => {
        if (serverPid) process.kill(serverPid, 'SIGKILL');
      }, 30_000);
      await exited;
      clearTimeout(timer);
    },
    /** A crash (SIGKILL of the postmaster), for fault tests; a restart on the same dataDir recovers. */
    async kill() {
      if (!running()) return;
      if (serverPid) process.kill(serverPid, 'SIGKILL');
      child.stdin.end();
      await exited;
    },
    exited,
  };
}

/**
 * Creates `database` if it does not exist and applies the legacy schemas to it (`sap.sql`,
 * `salesforce.sql` beside this file; both idempotent), so Debezium's connector finds every table it
 * captures from its first start on.
 */
export async function prepareLegacyDatabase(server, database = 'legacy') {
  const psql = join(binDir(), 'psql');
  const exists = await run(psql, [
    server.url(),
    '-tAc',
    `SELECT 1 FROM pg_database WHERE datname = '${database}'`,
  ]);
  if (exists.trim() !== '1') await run(psql, [server.url(), '-qc', `CREATE DATABASE ${database}`]);
  const schemas = ['sap.sql', 'salesforce.sql'].flatMap((file) => ['-f', join(here, file)]);
  await run(psql, [server.url(database), '-q', '-v', 'ON_ERROR_STOP=1', ...schemas]);
}

// `node infra/postgres/server.mjs`: a local dev server on EGGMESH_DEV_POSTGRES_PORT (default 5432)
// with its data in EGGMESH_DATA_DIR/postgres (default ./data/postgres) and the database `legacy` holding
// the SAP and Salesforce schemas (created if missing); Ctrl-C stops it.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const port = Number(process.env.EGGMESH_DEV_POSTGRES_PORT ?? 5432);
  const dataDir = join(process.env.EGGMESH_DATA_DIR ?? './data', 'postgres');
  const server = await start({ port, dataDir, onLog: (chunk) => process.stderr.write(chunk) });
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void server.stop());
  await prepareLegacyDatabase(server);
  process.stdout.write(
    `${serverName()} at ${server.url('legacy')} (schemas sap, salesforce), data in ${dataDir} (started in ${Math.round(server.startMs)} ms)\n`,
  );
  const { code, signal } = await server.exited;
  process.exitCode = code === 0 || signal === 'SIGTERM' ? 0 : 1;
}
