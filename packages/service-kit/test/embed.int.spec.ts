import { type ChildProcess, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// Real processes (a reset only shows across processes): the fixture serves a plain Fastify app from
// packages/service-kit/dist (run `pnpm build` first). FIXTURE_MODE=raw (app.routing without embed())
// showed resets on 4 of 20 uploads when this test was written.
const fixture = fileURLToPath(new URL('./fixtures/embedded.mjs', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function start(mode: 'embed' | 'service-app'): Promise<number> {
  const child = spawn(process.execPath, [fixture], {
    env: { ...process.env, FIXTURE_MODE: mode, EGGMESH_BODY_LIMIT_BYTES: '1024' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`fixture exited early (${code})`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const parsed = JSON.parse(line) as { port?: number };
      if (parsed.port) resolve(parsed.port);
    });
  });
}

/** 20 uploads of 4 MiB against a 1 KiB limit: what each client saw (a status, or a reset). */
async function refusedUploads(port: number): Promise<Array<number | 'reset'>> {
  const body = Buffer.alloc(4 * 1024 * 1024, 32);
  const outcomes: Array<number | 'reset'> = [];
  for (let i = 0; i < 20; i++) {
    outcomes.push(
      await new Promise((resolve) => {
        const req = httpRequest(`http://127.0.0.1:${port}/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': body.length },
          agent: false,
        });
        let answered = false;
        req.on('response', (res) => {
          answered = true;
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', () => {
          if (!answered) resolve('reset');
        });
        req.end(body);
      }),
    );
  }
  return outcomes;
}

describe('apps served without serve()', () => {
  it('an app embedded in another HTTP server (as the edge embeds the read-api) reads a refused upload to its end', async () => {
    // Built with plain Fastify, as the read-api builds its app: embed() gives it what serve() would.
    expect(await refusedUploads(await start('embed'))).toEqual(Array(20).fill(413));
  });

  it('an app from serviceApp() listening on its own reads a refused upload to its end', async () => {
    expect(await refusedUploads(await start('service-app'))).toEqual(Array(20).fill(413));
  });
});
