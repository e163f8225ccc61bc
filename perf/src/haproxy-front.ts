import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyConfig } from '@eggmesh/rest';
import { loadConfig } from '@eggmesh/service-kit';

/**
 * HAProxy (on PATH) in front of the bench's write-api and read-api, with the configuration compose runs
 * (generated from the route table), on BENCH_HAPROXY_PORT; the bench starts and stops it like a service.
 * SIGTERM stops HAProxy softly (SIGUSR1: open requests finish).
 */
const config = loadConfig('stack');
const port = Number(process.env.BENCH_HAPROXY_PORT);
const dir = mkdtempSync(join(tmpdir(), 'eggmesh-bench-haproxy-'));
const file = join(dir, 'haproxy.cfg');
writeFileSync(
  file,
  haproxyConfig({
    bind: `127.0.0.1:${port}`,
    write: `127.0.0.1:${config.ports.write}`,
    read: [`127.0.0.1:${config.ports.read}`],
    keepAliveTimeoutMs: config.http.keepAliveTimeoutMs,
    headersTimeoutMs: config.http.headersTimeoutMs,
    requestTimeoutMs: config.http.requestTimeoutMs,
    bodyLimitBytes: config.bodyLimitBytes,
    maxConnections: config.http.maxConnections,
    checkIntervalMs: 2000,
  }),
);
const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'inherit', 'inherit'] });
const stop = () => child.kill('SIGUSR1');
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
child.once('exit', (code) => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(code ?? 0);
});
