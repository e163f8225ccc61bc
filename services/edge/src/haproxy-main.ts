import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, commonServiceEnv, loadConfig, parseCommandLine } from '@eggmesh/service-kit';
import { exitCodes } from '@eggmesh/service-kit/config';
import { haproxyConfig, haproxyErrorFiles } from './haproxy.js';

parseCommandLine({
  command: 'node services/edge/dist/haproxy-main.js',
  summary:
    'Runs HAProxy (2.4 or newer, on PATH) as the front door on EDGE_PORT, configured from the edge route table:\n/<entity>/api, /docs and /openapi.json to the write-api, the GraphQL paths to the read-api, everything\nelse to the Node edge on EDGE_NODE_PORT. `pnpm start` runs it when EGGMESH_FRONT_DOOR=haproxy. SIGTERM or\nSIGINT stops HAProxy gracefully (open requests finish, at most EGGMESH_SHUTDOWN_TIMEOUT_MS).',
  env: [
    ...commonServiceEnv,
    'EDGE_PORT',
    'EDGE_NODE_PORT',
    'WRITE_API_PORT',
    'READ_API_PORT',
    'EGGMESH_WRITE_API_URL',
    'EGGMESH_READ_API_URL',
    'EGGMESH_BODY_LIMIT_BYTES',
  ],
});

/** The HAProxy version on PATH, or why there is none usable. */
function haproxyVersion(): { version: string } | { problem: string } {
  const run = spawnSync('haproxy', ['-v'], { encoding: 'utf8' });
  if (run.error)
    return {
      problem:
        'EGGMESH_FRONT_DOOR=haproxy needs HAProxy 2.4 or newer on PATH (Debian/Ubuntu: apt-get install haproxy)',
    };
  const version = /version (\d+)\.(\d+)[^\s]*/.exec(run.stdout);
  if (!version || Number(version[1]) * 100 + Number(version[2]) < 204)
    return {
      problem: `EGGMESH_FRONT_DOOR=haproxy needs HAProxy 2.4 or newer; found ${run.stdout.split('\n')[0]}`,
    };
  return { version: version[0] };
}

const log = (level: number, msg: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(
    `${JSON.stringify({ level, time: Date.now(), service: 'front-door', ...extra, msg })}\n`,
  );

function configFor(config: Config, errorDir: string): string {
  return haproxyConfig({
    bind: { host: config.host, port: config.ports.edge },
    upstreams: {
      ...config.upstreams,
      edge: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.ports.edgeNode}`,
    },
    keepAliveTimeoutMs: config.http.keepAliveTimeoutMs,
    headersTimeoutMs: config.http.headersTimeoutMs,
    requestTimeoutMs: config.http.requestTimeoutMs,
    bodyLimitBytes: config.bodyLimitBytes,
    maxConnections: config.http.maxConnections,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    errorDir,
  });
}

const config = loadConfig();
const found = haproxyVersion();
if ('problem' in found) {
  log(50, found.problem);
  process.exit(exitCodes.config);
}
// A port in use is told as the services tell it (the supervisor then stops, not retries); HAProxy
// itself would only exit 1.
await new Promise<void>((resolve) => {
  const probe = createServer()
    .once('error', (error: NodeJS.ErrnoException) => {
      log(50, `cannot listen on ${config.host}:${config.ports.edge}: ${error.code ?? error.message}`);
      process.exit(error.code === 'EADDRINUSE' ? exitCodes.portInUse : 1);
    })
    .listen(config.ports.edge, config.host, () => probe.close(() => resolve()));
});
const dir = mkdtempSync(join(tmpdir(), 'eggmesh-haproxy-'));
for (const [name, text] of Object.entries(haproxyErrorFiles(config.bodyLimitBytes)))
  writeFileSync(join(dir, name), text);
const file = join(dir, 'haproxy.cfg');
writeFileSync(file, configFor(config, dir));

// -db: in the foreground, so this process (and the supervisor above it) sees HAProxy end.
const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'inherit', 'inherit'] });
let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  log(30, `${signal}: stopping HAProxy (open requests finish)`);
  // SIGUSR1: HAProxy's soft stop (it stops listening, ends connections as they go idle).
  child.kill('SIGUSR1');
};
process.once('SIGTERM', () => stop('SIGTERM'));
process.once('SIGINT', () => stop('SIGINT'));
child.once('spawn', () =>
  log(30, 'front door ready', {
    haproxy: found.version,
    listen: `${config.host}:${config.ports.edge}`,
    upstreams: { ...config.upstreams, edge: config.ports.edgeNode },
    config: file,
  }),
);
child.once('exit', (code, signal) => {
  rmSync(dir, { recursive: true, force: true });
  if (stopping) {
    log(30, 'stopped.');
    process.exit(0);
  }
  log(50, `HAProxy exited (${signal ?? `code ${code}`})`);
  process.exit(1);
});
