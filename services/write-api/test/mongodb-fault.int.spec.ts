import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { loadConfig } from '@eggmesh/service-kit';
import {
  Connecting,
  ConnectingPrimaryStore,
  ConnectingReadStore,
  openMongoPrimaryStore,
  openMongoReadStore,
} from '@eggmesh/store-mongodb';
import { buildApp } from '@eggmesh/write-api';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningServer, serverName, start } from '../../../infra/mongodb/server.mjs';
import { tempDir } from './helpers.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function until(probe: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe(`write-api on MongoDB (${serverName}, file-backed) when the server is missing or dies`, () => {
  const dataDir = tempDir('eggmesh-write-mongo-fault-');
  let server: RunningServer | undefined;
  let app: FastifyInstance | undefined;
  const connectErrors: string[] = [];
  afterAll(async () => {
    await app?.close();
    await server?.kill();
  });

  it('not ready until MongoDB answers; 503 EGGMESH_UNAVAILABLE while it is gone; nothing acknowledged lost; resumes', async () => {
    const port = await freePort();
    const uri = `mongodb://127.0.0.1:${port}`;
    const config = loadConfig({
      EGGMESH_STORE: 'mongodb',
      EGGMESH_MONGODB_URI: uri,
      EGGMESH_DATA_DIR: dataDir,
    });
    const options = { uri, dbName: 'fault', serverSelectionTimeoutMS: 1000 };
    const primary = new ConnectingPrimaryStore(
      new Connecting(() => openMongoPrimaryStore(options), {
        retryMs: 200,
        onError: (error) => connectErrors.push(String(error)),
      }),
    );
    const reader = new ConnectingReadStore(
      new Connecting(() => openMongoReadStore({ ...options, readPreference: 'primary' }), { retryMs: 200 }),
    );
    app = await buildApp({ config, primary, reader });
    const farm = (name: string) => ({ name, farm_type: 'local_farm', zone: 'north' });
    const post = (name: string) => app!.inject({ method: 'POST', url: '/farm/api', payload: farm(name) });

    // No server yet: the service answers, is not ready, refuses writes with a stable code, and says why.
    expect((await app.inject({ url: '/health' })).statusCode).toBe(200);
    const notReady = await app.inject({ url: '/ready' });
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json()).toMatchObject({ code: 'EGGMESH_UNAVAILABLE' });
    const early = await post('early');
    expect(early.statusCode).toBe(503);
    expect(early.json()).toMatchObject({ code: 'EGGMESH_UNAVAILABLE' });
    await until(async () => connectErrors.length > 0);
    expect(connectErrors[0]).toMatch(/unreachable/i);

    server = await start({ port, dataDir });
    await until(async () => (await app!.inject({ url: '/ready' })).statusCode === 200);
    const acknowledged: { id: string; position: number }[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await post(`before-${i}`);
      expect(response.statusCode).toBe(201);
      acknowledged.push({ id: response.json().id, position: Number(response.headers['x-log-position']) });
    }

    await server.kill();
    // Once the service has seen the server go (a write racing the kill itself can stay pending: see
    // issue 8's note), writes answer 503 at once.
    await until(async () => (await app!.inject({ url: '/ready' })).statusCode === 503);
    const down = await post('down');
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ code: 'EGGMESH_UNAVAILABLE' });
    expect((await app.inject({ url: '/ready' })).statusCode).toBe(503);
    expect((await app.inject({ url: `/farm/api/${randomUUID()}` })).statusCode).toBe(503);

    server = await start({ port, dataDir });
    await until(async () => (await app!.inject({ url: '/ready' })).statusCode === 200);
    const after = await post('after');
    expect(after.statusCode).toBe(201);
    acknowledged.push({ id: after.json().id, position: Number(after.headers['x-log-position']) });
    for (const { id } of acknowledged) {
      expect((await app.inject({ url: `/farm/api/${id}` })).statusCode).toBe(200);
    }
    const positions = acknowledged.map((a) => a.position);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const log = await primary.log.read(0, 100);
    expect(log.map((e) => e.id)).toEqual(expect.arrayContaining(acknowledged.map((a) => a.id)));
    expect(log.map((e) => e.payload?.name)).not.toContain('down');
    expect(log.map((e) => e.payload?.name)).not.toContain('early');
  }, 150_000);
});
