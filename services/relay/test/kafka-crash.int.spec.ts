// The scaled log end to end: write-api (SQLite) → relay → Kafka → projector, with the relay and the
// projector SIGKILLed again and again while writes stream in through the REST API.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeEntry, kafkajsClient } from '@eggmesh/log-kafka';
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

/**
 * One operation through the REST API; answers the acknowledged log position, or the status when it was
 * refused (the generator was written for the store and sometimes asks what the API refuses, 4xx).
 */
async function send(base: string, op: WriteOperation): Promise<number | { refused: number; body: string }> {
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
  const body = await response.text();
  if (!response.ok) return { refused: response.status, body };
  return Number(response.headers.get('x-log-position'));
}

/** Every message of the topic's partition, in offset order, as log positions. */
async function topicPositions(brokers: string, topic: string): Promise<number[]> {
  const client = kafkajsClient({ brokers: [brokers], topic });
  const consumer = client.consumer(`check-${topic}`);
  try {
    const { high } = await client.offsets();
    const positions: number[] = [];
    let last = -1;
    await consumer.start(0, (batch) => {
      for (const m of batch.messages) {
        if (m.offset !== last + 1) continue;
        last = m.offset;
        positions.push(decodeEntry(m.value).position);
      }
    });
    await eventually(`the topic read to offset ${high - 1}`, async () => last >= high - 1);
    return positions;
  } finally {
    await consumer.close();
    await client.close();
  }
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
      const s = startService('projector', 'main.js', common, 'PROJECTOR_PORT', projectorPort, [
        '--batch',
        '9',
      ]);
      running.push(s);
      return s;
    };
    let relay = startRelay();
    let projector = startProjector();

    const rng = new Rng(20261123);
    const generator = new WriteGenerator(rng, new TestClock(Date.parse('2026-03-01T06:00:00Z')));
    const acknowledged: Acknowledged[] = [];
    const refused: { refused: number; body: string }[] = [];
    let writing = true;
    // Three clients write at once; each sends one generated commit's operations in order.
    const writer = Promise.all(
      [0, 1, 2].map(async () => {
        while (writing) {
          for (const op of generator.commit()) {
            const answer = await send(writeApi.url, op);
            if (typeof answer === 'number') acknowledged.push({ op, position: answer });
            else refused.push(answer);
          }
        }
      }),
    );

    // Each round kills the relay, the projector or both: mostly once the victim is up and working
    // (the relay ready, the projector ready and moving), sometimes while it is still starting.
    const relayReady = async () => (await getJson(`${relay.url}/ready`))?.status === 200;
    const projectorAt = async () => {
      const answer = await getJson(`${projector.url}/ready`);
      return answer?.status === 200 ? Number(answer.body.position) : null;
    };
    const kills: { victim: string; relayWasReady: boolean; projectorAt: number | null }[] = [];
    try {
      for (let round = 0; round < 6; round++) {
        const victim = (['relay', 'projector', 'both'] as const)[round % 3]!;
        if (round < 3 || rng.chance(0.5)) {
          await eventually('the relay ready', relayReady, 60_000);
          const from = (await eventually('the projector ready', projectorAt, 60_000)) ?? 0;
          await eventually('the projector moving', async () => ((await projectorAt()) ?? 0) > from, 60_000);
        }
        await sleep(rng.int(50, 600));
        kills.push({ victim, relayWasReady: await relayReady(), projectorAt: await projectorAt() });
        if (victim !== 'projector') await stop(relay, 'SIGKILL');
        if (victim !== 'relay') await stop(projector, 'SIGKILL');
        await sleep(rng.int(0, 300));
        if (victim !== 'projector') relay = startRelay();
        if (victim !== 'relay') projector = startProjector();
      }
    } finally {
      writing = false;
      await writer;
    }
    // The kills hit a relay that was publishing and a projector that was applying.
    expect(kills.filter((k) => k.victim !== 'projector' && k.relayWasReady).length).toBeGreaterThan(0);
    expect(kills.filter((k) => k.victim !== 'relay' && (k.projectorAt ?? 0) > 0).length).toBeGreaterThan(0);
    expect(acknowledged.length, `${refused.length} refused`).toBeGreaterThan(100);

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
      // Refusals are the API's 4xx for what it rejects, never a failure of the server.
      for (const r of refused) expect(r.refused, r.body).toBeLessThan(500);

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

      // The topic holds every position once at least, in order: the relay skipped nothing.
      const positions = await topicPositions(kafkaBrokers(), topic);
      expect(positions.every((p, i) => i === 0 || p >= positions[i - 1]!)).toBe(true);
      expect([...new Set(positions)]).toEqual(entries.map((e) => e.position));

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
  }, 400_000);
});
