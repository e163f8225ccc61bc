import { randomUUID } from 'node:crypto';
import { parseConfig } from '@eggmesh/service-kit';
import {
  Connecting,
  ConnectingPrimaryStore,
  ConnectingReadStore,
  openMongoPrimaryStore,
  openMongoReadStore,
} from '@eggmesh/store-mongodb';
import { buildApp } from '@eggmesh/write-api';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningServer, serverName, start } from '../../../infra/mongodb/server.mjs';
import { freePort } from '../../../infra/test/process.js';
import { tempDir } from './helpers.js';

/** The response, or a failure naming the request that never answered (the bug this file guards against). */
async function answered<T>(request: Promise<T>, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the request was still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([request, pending]);
  } finally {
    clearTimeout(timer);
  }
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
    const config = parseConfig({
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

    // The write posted at the kill itself must answer (acknowledged or 503), not stay pending.
    const killed = server.kill();
    const racing = await answered(post('racing'));
    await killed;
    expect([201, 503]).toContain(racing.statusCode);
    if (racing.statusCode === 201) {
      acknowledged.push({ id: racing.json().id, position: Number(racing.headers['x-log-position']) });
    } else {
      expect(racing.json()).toMatchObject({ code: 'EGGMESH_UNAVAILABLE' });
    }
    const down = await answered(post('down'));
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

  it('writes posted at the kill itself answer (201 or 503), five times over; nothing acknowledged is lost; writes resume', async () => {
    const raceDir = tempDir('eggmesh-write-mongo-race-');
    const port = await freePort();
    const uri = `mongodb://127.0.0.1:${port}`;
    let raceServer = await start({ port, dataDir: raceDir });
    const config = parseConfig({
      EGGMESH_STORE: 'mongodb',
      EGGMESH_MONGODB_URI: uri,
      EGGMESH_DATA_DIR: raceDir,
    });
    const options = { uri, dbName: 'race', serverSelectionTimeoutMS: 1000 };
    const primary = new ConnectingPrimaryStore(
      new Connecting(() => openMongoPrimaryStore(options), { retryMs: 200 }),
    );
    const reader = new ConnectingReadStore(
      new Connecting(() => openMongoReadStore({ ...options, readPreference: 'primary' }), { retryMs: 200 }),
    );
    const raceApp = await buildApp({ config, primary, reader });
    try {
      const post = (name: string) =>
        raceApp.inject({
          method: 'POST',
          url: '/farm/api',
          payload: { name, farm_type: 'local_farm', zone: 'north' },
        });
      await until(async () => (await raceApp.inject({ url: '/ready' })).statusCode === 200);
      const acknowledged: { id: string; name: string }[] = [];
      const refused: string[] = [];
      const settle = (name: string, response: LightMyRequestResponse) => {
        expect([201, 503]).toContain(response.statusCode);
        if (response.statusCode === 201) acknowledged.push({ id: response.json().id, name });
        else {
          expect(response.json()).toMatchObject({ code: 'EGGMESH_UNAVAILABLE' });
          refused.push(name);
        }
      };
      for (let round = 0; round < 5; round++) {
        settle(`warm-${round}`, await answered(post(`warm-${round}`)));
        // Writes in flight when the server dies, and writes posted right after it.
        const inFlight = [0, 1, 2].map((i) => post(`in-flight-${round}-${i}`));
        const killed = raceServer.kill();
        const atKill = [0, 1, 2].map((i) => post(`at-kill-${round}-${i}`));
        const responses = await Promise.all([...inFlight, ...atKill].map((r) => answered(r)));
        for (const [i, response] of responses.entries()) {
          settle(i < 3 ? `in-flight-${round}-${i}` : `at-kill-${round}-${i - 3}`, response);
        }
        await killed;
        raceServer = await start({ port, dataDir: raceDir });
        await until(async () => (await raceApp.inject({ url: '/ready' })).statusCode === 200);
        const after = await answered(post(`after-${round}`));
        expect(after.statusCode).toBe(201);
        acknowledged.push({ id: after.json().id, name: `after-${round}` });
      }
      for (const { id } of acknowledged) {
        expect((await raceApp.inject({ url: `/farm/api/${id}` })).statusCode).toBe(200);
      }
      const log = await primary.log.read(0, 1000);
      expect(log.map((e) => e.id)).toEqual(expect.arrayContaining(acknowledged.map((a) => a.id)));
      const logged = new Set(log.map((e) => e.payload?.name));
      for (const name of refused) {
        // A 503 is "not acknowledged": it may or may not have committed, but never twice.
        expect(log.filter((e) => e.payload?.name === name).length).toBeLessThanOrEqual(1);
      }
      expect(logged.size).toBe(log.length);
    } finally {
      await raceApp.close();
      await raceServer.kill();
    }
  }, 600_000);
});
