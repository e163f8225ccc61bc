import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../infra/test/process.js';
import { upstreamFor } from '../src/routes.js';
import { listenOnFreePort } from './raw-client.js';

// HAProxy as the front door (EGGMESH_FRONT_DOOR=haproxy): the real HAProxy, started by the wrapper
// `pnpm start` runs, in front of three small real HTTP servers standing in for the write-api, the
// read-api and the Node edge. It must route every path as the Node edge's route table does, and answer
// its own errors with eggmesh's JSON bodies.

const main = fileURLToPath(new URL('../dist/haproxy-main.js', import.meta.url));
const ensureTools = fileURLToPath(new URL('../../../infra/ensure-tools.sh', import.meta.url));

async function upstream(name: string): Promise<{ app: FastifyInstance; port: number }> {
  const app = Fastify();
  app.all('/*', async (req) => ({
    served_by: name,
    url: req.url,
    forwarded_for: req.headers['x-forwarded-for'],
  }));
  app.post('/slow/api', async () => {
    await new Promise((r) => setTimeout(r, 3000));
    return { late: true };
  });
  return { app, port: await listenOnFreePort(app) };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(port: number, method: string, path: string, body?: string, headers = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Starts the wrapper; resolves once HAProxy answers on `port`. */
async function startFrontDoor(env: Record<string, string>, port: number) {
  const output: string[] = [];
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, EGGMESH_HOST: '127.0.0.1', EDGE_PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => output.push(String(d)));
  child.stderr?.on('data', (d) => output.push(String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output, exited };
}

describe('HAProxy front door (EGGMESH_FRONT_DOOR=haproxy)', () => {
  let write: Awaited<ReturnType<typeof upstream>>;
  let read: Awaited<ReturnType<typeof upstream>>;
  let edge: Awaited<ReturnType<typeof upstream>>;
  let port = 0;
  let door: Awaited<ReturnType<typeof startFrontDoor>>;

  beforeAll(async () => {
    execFileSync('bash', [ensureTools, 'haproxy'], { stdio: 'inherit' });
    expect(
      () => execFileSync('haproxy', ['-v']),
      'HAProxy is not installed (infra/ensure-tools.sh haproxy)',
    ).not.toThrow();
    [write, read, edge] = await Promise.all([upstream('write'), upstream('read'), upstream('edge')]);
    port = await freePort();
    door = await startFrontDoor(
      {
        EDGE_NODE_PORT: String(edge.port),
        EGGMESH_WRITE_API_URL: `http://127.0.0.1:${write.port}`,
        EGGMESH_READ_API_URL: `http://127.0.0.1:${read.port}`,
        EGGMESH_BODY_LIMIT_BYTES: '1000',
        EGGMESH_HTTP_REQUEST_TIMEOUT_MS: '1000',
        EGGMESH_HTTP_HEADERS_TIMEOUT_MS: '1000',
      },
      port,
    );
    const deadline = Date.now() + 15_000;
    for (;;) {
      const up = await send(port, 'GET', '/health').catch(() => null);
      if (up?.status === 200) break;
      if (Date.now() > deadline || door.child.exitCode !== null)
        throw new Error(`HAProxy did not start:\n${door.output.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 180_000);

  afterAll(async () => {
    if (door && door.child.exitCode === null) door.child.kill('SIGKILL');
    await Promise.all([write?.app.close(), read?.app.close(), edge?.app.close()]);
  });

  it('routes every path as the Node edge route table does, the rest to the Node edge', async () => {
    const paths = [
      ['POST', '/farm/api'],
      ['GET', '/farm/api/0190b1a0-0000-7000-8000-000000000000'],
      ['GET', '/lay_report/api?limit=2'],
      ['POST', '/hen/graph'],
      ['POST', '/graphql'],
      ['GET', '/graphiql'],
      ['GET', '/docs/static/index.html'],
      ['GET', '/openapi.json'],
      ['GET', '/'],
      ['GET', '/health'],
      ['GET', '/metrics'],
      ['GET', '/farm/apis'],
      ['GET', '/Farm/api'],
      ['GET', '/farm/graph/extra'],
    ] as const;
    const seen: string[] = [];
    for (const [method, path] of paths) {
      const answer = await send(port, method, path, method === 'POST' ? '{}' : undefined, {
        'content-type': 'application/json',
      });
      expect(answer.status, `${method} ${path}`).toBe(200);
      const body = JSON.parse(answer.body) as { served_by: string; url: string; forwarded_for: string };
      expect(body.served_by, `${method} ${path}`).toBe(upstreamFor(path.split('?')[0]!) ?? 'edge');
      expect(body.url).toBe(path);
      expect(body.forwarded_for).toBe('127.0.0.1');
      seen.push(body.served_by);
    }
    // The table above reaches all three.
    expect(new Set(seen)).toEqual(new Set(['write', 'read', 'edge']));
  });

  it('refuses a declared body over EGGMESH_BODY_LIMIT_BYTES with 413 and the JSON error', async () => {
    const answer = await send(port, 'POST', '/farm/api', 'x'.repeat(1001), {
      'content-type': 'application/json',
    });
    expect(answer.status).toBe(413);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answer.body)).toEqual({
      code: 'EGGMESH_BODY_TOO_LARGE',
      error: 'the body is larger than 1000 bytes (EGGMESH_BODY_LIMIT_BYTES)',
    });
  });

  it('answers 504 with the JSON error when a service does not answer in EGGMESH_HTTP_REQUEST_TIMEOUT_MS', async () => {
    const answer = await send(port, 'POST', '/slow/api', '{}', { 'content-type': 'application/json' });
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body)).toEqual({
      code: 'EGGMESH_UPSTREAM_TIMEOUT',
      error: 'the write-api did not answer in time',
    });
  });

  it('answers 502 or 503 with the JSON error naming the service when it is down', async () => {
    await read.app.close();
    const answer = await send(port, 'POST', '/farm/graph', '{}', { 'content-type': 'application/json' });
    expect([502, 503]).toContain(answer.status);
    expect(JSON.parse(answer.body)).toEqual({
      code: 'EGGMESH_UPSTREAM_UNAVAILABLE',
      error: 'the read-api did not answer',
    });
    // The others still answer.
    expect((await send(port, 'GET', '/farm/api')).status).toBe(200);
  });

  it('refuses to start on a port in use (exit 98) and stops on SIGTERM, removing its files', async () => {
    const second = await startFrontDoor({ EDGE_NODE_PORT: String(edge.port) }, port);
    expect(await second.exited).toBe(98);
    expect(second.output.join('')).toContain('EADDRINUSE');

    const config = /"config":"([^"]+)"/.exec(door.output.join(''))?.[1];
    expect(config && existsSync(config)).toBe(true);
    door.child.kill('SIGTERM');
    expect(await door.exited).toBe(0);
    expect(existsSync(config!)).toBe(false);
    expect(door.output.join('')).toContain('stopped.');
    await expect(send(port, 'GET', '/health')).rejects.toThrow();
  });
});
