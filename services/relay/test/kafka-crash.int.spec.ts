// The scaled log end to end: write-api (SQLite) → relay → Kafka → projector, with the relay and the
// projector SIGKILLed again and again while writes stream in through the REST API.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WriteOperation } from '@eggmesh/store';
import {
  currentGeneration,
  dataFiles,
  openDatabase,
  openPrimaryStore,
  openProjectionStore,
} from '@eggmesh/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Projector } from '../../projector/src/index.js';
import { dumpGeneration, Rng, TestClock, WriteGenerator } from '../../projector/test/helpers.js';
import {
  ensureBuilt,
  eventually,
  freePort,
  freshTopic,
  getJson,
  kafkaBrokers,
  type Service,
  startService,
  stop,
  tempDir,
} from './helpers.js';

beforeAll(() => ensureBuilt(['write-api', 'relay', 'projector']), 240_000);

interface Acknowledged {
  readonly op: WriteOperation;
  readonly position: number;
}

/** One operation through the REST API; answers the acknowledged log position, or null when refused. */
async function send(base: string, op: WriteOperation): Promise<number | null> {
  const url = `${base}/${op.entity}/api`;
  const init: RequestInit =
    op.op === 'create'
      ? { method: 'POST', body: JSON.stringify({ ...op.payload, id: op.id }) }
      : op.op === 'update'
        ? { method: 'PUT', body: JSON.stringify(op.payload) }
        : { method: 'DELETE' };
  const response = await fetch(op.op === 'create' ? url : `${url}/${op.id}`, {
    ...init,
    headers: op.op === 'delete' ? {} : { 'content-type': 'application/json' },
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  if (!response.ok) return null;
  return Number(response.headers.get('x-log-position'));
}

describe('SIGKILL of the relay and the projector while writes stream in (Kafka log)', () => {
  const dir = tempDir('eggmesh-kafka-crash-');
  const running: Service[] = [];
  afterAll(async () => {
    for (const s of running) await stop(s);
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends with projections equal to a clean rebuild, no acknowledged write missing', async () => {
    const topic = freshTopic();
    const common = {
      EGGMESH_DATA_DIR: dir,
      EGGMESH_LOG: 'kafka',
      EGGMESH_KAFKA_BROKERS: kafkaBrokers(),
      EGGMESH_KAFKA_TOPIC: topic,
      EGGMESH_LOG_LEVEL: 'warn',
    };
    const [writePort, relayPort, projectorPort] = [await freePort(), await freePort(), await freePort()];
    const writeApi = startService('write-api', 'server.js', common, 'WRITE_API_PORT', writePort);
    running.push(writeApi);
    await eventually('the write-api', () => getJson(`${writeApi.url}/health`));
    const startRelay = () => {
      const s = startService('relay', 'main.js', common, 'RELAY_PORT', relayPort);
      running.push(s);
      return s;
    };
    const startProjector = () => {
      const s = startService(
        'projector',
        'main.js',
        { ...common, EGGMESH_PROJECTOR_BATCH: '9' },
        'PROJECTOR_PORT',
        projectorPort,
      );
      running.push(s);
      return s;
    };
    let relay = startRelay();
    let projector = startProjector();

    const rng = new Rng(20261123);
    const generator = new WriteGenerator(rng, new TestClock(Date.parse('2026-03-01T06:00:00Z')));
    const acknowledged: Acknowledged[] = [];
    let refused = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        for (const op of generator.commit()) {
          const position = await send(writeApi.url, op);
          if (position === null) refused += 1;
          else acknowledged.push({ op, position });
        }
      }
    })();

    let kills = 0;
    try {
      for (let round = 0; round < 8; round++) {
        await sleep(rng.int(200, 900));
        const victim = rng.pick(['relay', 'projector', 'both'] as const);
        if (victim !== 'projector') {
          await stop(relay, 'SIGKILL');
          kills += 1;
        }
        if (victim !== 'relay') {
          await stop(projector, 'SIGKILL');
          kills += 1;
        }
        await sleep(rng.int(0, 300));
        if (victim !== 'projector') relay = startRelay();
        if (victim !== 'relay') projector = startProjector();
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(kills).toBeGreaterThanOrEqual(8);
    expect(acknowledged.length).toBeGreaterThan(100);

    const primary = openPrimaryStore({ file: dataFiles(dir).primary, readonly: true });
    try {
      const head = await primary.log.head();
      // Every acknowledged write is in the primary's log at the position it was told.
      const entries = await primary.log.read(0, Number.MAX_SAFE_INTEGER);
      const byPosition = new Map(entries.map((e) => [e.position, e]));
      for (const { op, position } of acknowledged) {
        expect(
          byPosition.get(position),
          `acknowledged ${op.op} ${op.entity}/${op.id} at ${position}`,
        ).toMatchObject({
          entity: op.entity,
          id: op.id,
          op: op.op,
        });
      }
      expect(refused).toBe(0);

      // The projector catches up through Kafka, and says so.
      const ready = await eventually(
        `the projector at ${head}`,
        async () => {
          const answer = await getJson(`${projector.url}/ready`);
          return answer?.body.position === head ? answer : undefined;
        },
        90_000,
      );
      expect(ready.body).toMatchObject({ status: 'ready', position: head });
      await stop(projector, 'SIGTERM');
      await stop(relay, 'SIGTERM');

      // Row for row what a clean rebuild from the primary's log makes: no effect twice, none missing.
      const projectionsDir = dataFiles(dir).projectionsDir;
      const served = openDatabase(join(projectionsDir, currentGeneration(projectionsDir)!), {
        readonly: true,
      });
      const rebuilt = openProjectionStore({ dir: join(dir, 'rebuilt') });
      try {
        await new Projector(primary.log, rebuilt, 1_000_000).catchUp();
        const dump = dumpGeneration(served);
        expect(dump.checkpoint).toBe(head);
        expect(dump).toEqual(dumpGeneration(rebuilt.db));
      } finally {
        served.close();
        await rebuilt.close();
      }
    } finally {
      await primary.close();
    }
  }, 240_000);
});
