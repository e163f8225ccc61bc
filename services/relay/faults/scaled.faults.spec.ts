// The scaled tier's fault matrix (`pnpm faults:scaled [--server emulator|ferretdb]`, not part of
// `pnpm test`): write-api, relay and projector on a MongoDB-wire server and a Kafka broker of their
// own, writes streaming in through the REST API from three clients, and each of the five processes
// SIGKILLed and restarted in turn. Then: every acknowledged write is in the log at the position it was
// told, nothing answered 500, the projector catches up, and the projections equal a clean rebuild
// from the log, row for row.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WriteOperation } from '@eggmesh/store';
import {
  openMongoEventLog,
  openMongoPrimaryStore,
  openMongoProjectionStore,
  projectionEntities,
} from '@eggmesh/store-mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as kafka from '../../../infra/kafka/server.mjs';
import { Projector } from '../../projector/src/index.js';
import { Rng, TestClock, WriteGenerator } from '../../projector/test/helpers.js';
import {
  ensureBuilt,
  eventually,
  freePort,
  getJson,
  type Service,
  startService,
  stop,
  tempDir,
} from '../test/helpers.js';

const serverKind = process.env.EGGMESH_FAULTS_SERVER === 'ferretdb' ? 'ferretdb' : 'emulator';
const wire =
  serverKind === 'ferretdb'
    ? await import('../../../infra/ferretdb/server.mjs')
    : await import('../../../infra/mongodb/server.mjs');
const ROUNDS = Number(process.env.EGGMESH_FAULTS_ROUNDS ?? 10);
const VICTIMS = ['write-api', 'projector', 'relay', 'mongodb', 'broker'] as const;
type Victim = (typeof VICTIMS)[number];
const DB = 'faults';

beforeAll(() => ensureBuilt(['write-api', 'relay', 'projector']), 240_000);

interface Acknowledged {
  readonly op: WriteOperation;
  readonly position: number;
}

type Answer = number | { refused: number; body: string } | { unknown: string };

/** One operation through the REST API: its acknowledged position, a refusal, or no answer at all. */
async function send(base: string, op: WriteOperation): Promise<Answer> {
  const url = `${base}/${op.entity}/api`;
  const init: RequestInit =
    op.op === 'create'
      ? { method: 'POST', body: JSON.stringify({ ...op.payload, id: op.id }) }
      : op.op === 'update'
        ? { method: 'PUT', body: JSON.stringify(op.payload) }
        : { method: 'DELETE' };
  try {
    const response = await fetch(op.op === 'create' ? url : `${url}/${op.id}`, {
      ...init,
      headers: op.op === 'delete' ? {} : { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(40_000),
    });
    const body = await response.text();
    if (!response.ok) return { refused: response.status, body };
    return Number(response.headers.get('x-log-position'));
  } catch (error) {
    // The write-api was killed with the request in flight, or was down: the outcome is unknown.
    return { unknown: (error as Error).message };
  }
}

/** Every projection row, in a stable order, without what depends on how the log was cut into batches. */
async function dump(uri: string, dbName: string): Promise<Record<string, Record<string, unknown>[]>> {
  const store = await openMongoPrimaryStore({ uri, dbName, readonly: true });
  try {
    const db = store.client.db(dbName);
    const out: Record<string, Record<string, unknown>[]> = {};
    const rows = async (name: string, sort: Record<string, 1>, dropId: boolean) =>
      (await db.collection(name).find({}).sort(sort).toArray()).map(({ _id, position: _p, ...rest }) =>
        dropId ? rest : { _id, ...rest },
      );
    for (const entity of projectionEntities) {
      out[`${entity}_current`] = await rows(`${entity}_current`, { _id: 1 }, false);
      out[`${entity}_versions`] = await rows(`${entity}_versions`, { id: 1, created_at: 1 }, true);
    }
    out.projector_state = await rows('projector_state', { _id: 1 }, false);
    return out;
  } finally {
    await store.close();
  }
}

describe(`scaled fault matrix on ${wire.serverName} and Kafka: SIGKILL of ${VICTIMS.join(', ')} during writes`, () => {
  const dir = tempDir('eggmesh-faults-scaled-');
  const running: Service[] = [];
  let mongo: Awaited<ReturnType<typeof wire.start>> | undefined;
  let broker: kafka.RunningBroker | undefined;
  afterAll(async () => {
    for (const s of running) await stop(s);
    await mongo?.stop().catch(() => undefined);
    await broker?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('loses no acknowledged write, answers no 500, and ends with projections equal to a clean rebuild', async () => {
    const mongoPort = await freePort();
    const startMongo = () => wire.start({ port: mongoPort, dataDir: join(dir, 'mongodb') });
    const [kafkaPort, controllerPort] = [await freePort(), await freePort()];
    const startBroker = () => kafka.start({ port: kafkaPort, controllerPort, dataDir: join(dir, 'kafka') });
    mongo = await startMongo();
    broker = await startBroker();
    const uri = mongo.uri;
    const env = {
      EGGMESH_DATA_DIR: dir,
      EGGMESH_STORE: 'mongodb',
      EGGMESH_MONGODB_URI: uri,
      EGGMESH_MONGODB_DB: DB,
      EGGMESH_LOG: 'kafka',
      EGGMESH_KAFKA_BROKERS: broker.brokers,
      EGGMESH_KAFKA_TOPIC: 'faults.events',
      EGGMESH_LOG_LEVEL: 'warn',
    };
    const [writePort, relayPort, projectorPort] = [await freePort(), await freePort(), await freePort()];
    const starters: Record<'write-api' | 'relay' | 'projector', () => Service> = {
      'write-api': () => startService('write-api', 'server.js', env, 'WRITE_API_PORT', writePort),
      relay: () => startService('relay', 'main.js', env, 'RELAY_PORT', relayPort),
      projector: () =>
        startService('projector', 'main.js', env, 'PROJECTOR_PORT', projectorPort, ['--batch', '9']),
    };
    const services = {
      'write-api': starters['write-api'](),
      relay: starters.relay(),
      projector: starters.projector(),
    };
    running.push(...Object.values(services));
    const ready = async (name: keyof typeof services) =>
      (await getJson(`${services[name].url}/ready`))?.status === 200;
    const projectorAt = async () => {
      const answer = await getJson(`${services.projector.url}/ready`);
      return answer?.status === 200 ? Number(answer.body.position) : null;
    };
    await eventually('the write-api ready', () => ready('write-api'), 120_000);

    const rng = new Rng(20261202);
    const generator = new WriteGenerator(rng, new TestClock(Date.now()));
    const acknowledged: Acknowledged[] = [];
    const refused: { refused: number; body: string }[] = [];
    const unknown: string[] = [];
    let writing = true;
    const writer = Promise.all(
      [0, 1, 2].map(async () => {
        while (writing) {
          for (const op of generator.commit()) {
            const answer = await send(services['write-api'].url, op);
            if (typeof answer === 'number') acknowledged.push({ op, position: answer });
            else if ('refused' in answer) refused.push(answer);
            else {
              unknown.push(answer.unknown);
              await sleep(100);
            }
          }
        }
      }),
    );

    const kills: { victim: Victim; acknowledgedBefore: number; projectorAt: number | null }[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const victim = VICTIMS[round % VICTIMS.length]!;
        // Mostly once everything is up and moving, sometimes while it is still recovering.
        if (round < VICTIMS.length || rng.chance(0.5)) {
          await eventually('the write-api ready', () => ready('write-api'), 120_000);
          await eventually('the relay ready', () => ready('relay'), 120_000);
          const from = (await eventually('the projector ready', projectorAt, 120_000)) ?? 0;
          await eventually('the projector moving', async () => ((await projectorAt()) ?? 0) > from, 120_000);
        }
        await sleep(rng.int(50, 600));
        kills.push({ victim, acknowledgedBefore: acknowledged.length, projectorAt: await projectorAt() });
        if (victim === 'mongodb') {
          await mongo.kill();
          await sleep(rng.int(0, 1000));
          mongo = await startMongo();
        } else if (victim === 'broker') {
          await broker.kill();
          await sleep(rng.int(0, 1000));
          broker = await startBroker();
        } else {
          await stop(services[victim], 'SIGKILL');
          await sleep(rng.int(0, 300));
          services[victim] = starters[victim]();
          running.push(services[victim]);
        }
      }
      // Writes go on until everything is back.
      await eventually('the write-api ready', () => ready('write-api'), 120_000);
      await eventually('the relay ready', () => ready('relay'), 120_000);
      await sleep(1000);
    } finally {
      writing = false;
      await writer;
    }

    const log = await openMongoEventLog({ uri, dbName: DB });
    try {
      const head = await log.head();
      const entries = await log.read(0, Number.MAX_SAFE_INTEGER);
      const byPosition = new Map(entries.map((e) => [e.position, e]));
      let missing = 0;
      for (const { op, position } of acknowledged) {
        const entry = byPosition.get(position);
        if (entry?.entity !== op.entity || entry.id !== op.id || entry.op !== op.op) missing++;
      }
      const statuses = new Map<number, number>();
      for (const r of refused) statuses.set(r.refused, (statuses.get(r.refused) ?? 0) + 1);
      const projected = await eventually(
        `the projector at ${head}`,
        async () => {
          const answer = await getJson(`${services.projector.url}/ready`);
          return answer?.body.position === head ? answer : undefined;
        },
        180_000,
      );
      await stop(services.projector, 'SIGTERM');
      await stop(services.relay, 'SIGTERM');
      const rebuiltDb = `${DB}_rebuilt`;
      const rebuilt = await openMongoProjectionStore({ uri, dbName: rebuiltDb });
      try {
        await new Projector(log, rebuilt, 1_000_000).catchUp();
      } finally {
        await rebuilt.close();
      }
      const served = await dump(uri, DB);
      const clean = await dump(uri, rebuiltDb);
      const rows = Object.values(served).reduce((n, r) => n + r.length, 0);
      console.log(
        [
          `server: ${wire.serverName}; broker: Kafka (${kafka.serverName})`,
          `kills: ${kills.map((k) => k.victim).join(', ')}`,
          `writes: ${acknowledged.length} acknowledged, ${missing} of them missing from the log; ${refused.length} refused (${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ') || 'none'}); ${unknown.length} without an answer (the write-api killed or down)`,
          `log head ${head}; projector at ${projected.body.position}; projections ${rows} rows, equal to a clean rebuild: ${JSON.stringify(served) === JSON.stringify(clean)}`,
        ].join('\n'),
      );
      expect(kills.map((k) => k.victim)).toEqual(expect.arrayContaining([...VICTIMS]));
      expect(acknowledged.length).toBeGreaterThan(100);
      expect(missing).toBe(0);
      // Refusals are the API's 4xx for what it rejects, or 503 while a dependency is down; never a 500.
      for (const r of refused) expect(r.refused === 503 || r.refused < 500, r.body).toBe(true);
      expect(projected.body).toMatchObject({ status: 'ready', position: head });
      expect(rows).toBeGreaterThan(0);
      expect(served).toEqual(clean);
    } finally {
      await log.close();
    }
  }, 1_800_000);
});
