// Each service entry loads the mongodb driver only when EGGMESH_STORE=mongodb: on SQLite it is never
// read from disk. NODE_DEBUG=module makes Node's CommonJS loader name every file it loads (the driver
// is CommonJS, so an ESM `import` of it goes through that loader too); a mongodb run is the control.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, until } from './helpers.js';

const entry = (service: string, file: string) =>
  fileURLToPath(new URL(`../../${service}/dist/${file}`, import.meta.url));
const MONGODB_DRIVER = /node_modules\/(\.pnpm\/mongodb@[^/]+\/node_modules\/)?mongodb\/lib\//;

/** Starts a built entry, waits until it answers /health, stops it; answers its module trace. */
async function trace(file: string, portVar: string, env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, ...env, [portVar]: String(port), NODE_DEBUG: 'module', EGGMESH_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await until(async () => ((await fetch(`http://127.0.0.1:${port}/health`)).ok ? true : undefined), 60_000);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return stderr;
}

describe('the mongodb driver is loaded only on the MongoDB tier', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'eggmesh-lazy-mongodb-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const sqlite = { EGGMESH_STORE: 'sqlite', EGGMESH_DATA_DIR: dataDir };

  it('write-api, read-api and projector on SQLite never load it', async () => {
    // The write-api first: it creates the SQLite files the other two open.
    const services = [
      ['write-api', 'server.js', 'WRITE_API_PORT'],
      ['read-api', 'server.js', 'READ_API_PORT'],
      ['projector', 'main.js', 'PROJECTOR_PORT'],
    ] as const;
    for (const [service, file, portVar] of services) {
      const modules = await trace(entry(service, file), portVar, sqlite);
      expect(modules, `${service} traced its module loads`).toMatch(/MODULE \d+: load /);
      expect(modules, `${service} loaded the mongodb driver on SQLite`).not.toMatch(MONGODB_DRIVER);
    }
  }, 180_000);

  it('the control: the write-api on MongoDB does load it (so the trace would show it)', async () => {
    const modules = await trace(entry('write-api', 'server.js'), 'WRITE_API_PORT', {
      EGGMESH_STORE: 'mongodb',
      EGGMESH_MONGODB_URI: `mongodb://127.0.0.1:${await freePort()}`,
      EGGMESH_DATA_DIR: dataDir,
    });
    expect(modules).toMatch(MONGODB_DRIVER);
  }, 120_000);
});
