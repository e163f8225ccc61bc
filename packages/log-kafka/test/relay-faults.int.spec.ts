import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningBroker, start } from '../../../infra/kafka/server.mjs';
import { type KafkaClient, Relay } from '../src/index.js';
import {
  client,
  eventually,
  freshTopic,
  sourceOf,
  type TempPrimary,
  tempPrimary,
  topicPositions,
} from './helpers.js';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

describe('the relay when the broker is away (a broker of its own)', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('is not ready while the broker is down at start, says so, and publishes once it is up; a broker gone mid-stream loses nothing and keeps the order', async () => {
    const [port, controllerPort] = [await freePort(), await freePort()];
    const dataDir = mkdtempSync(join(tmpdir(), 'eggmesh-kafka-fault-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const primary: TempPrimary = tempPrimary();
    cleanup.push(() => primary.dispose());
    const kafka: KafkaClient = client(freshTopic(), `127.0.0.1:${port}`);
    cleanup.push(() => kafka.close());
    const lines: string[] = [];
    const relay = new Relay({
      source: sourceOf(primary.store),
      client: kafka,
      batchSize: 50,
      idleWaitMs: 200,
      retryMs: 200,
      onLog: (_level, message) => lines.push(message),
    });
    const stop = new AbortController();
    const running = relay.run(stop.signal);
    cleanup.push(async () => {
      stop.abort();
      await running;
    });

    await primary.write(20);
    // Broker down at start: not ready, one clear line, retrying.
    await eventually('a failure line', () => lines.some((l) => /publishing failed .*retrying/.test(l)));
    expect(relay.isReady).toBe(false);
    expect(relay.position).toBeNull();

    let broker: RunningBroker = await start({ port, controllerPort, dataDir });
    cleanup.push(() => broker.stop());
    await eventually('the relay to publish 20', () => relay.isReady && relay.position === 20, 60_000);

    // Writes keep streaming into the primary while the broker goes away and comes back.
    let writing = true;
    let written = 20;
    const writer = (async () => {
      while (writing) {
        written = (await primary.write(1))[0]!;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    cleanup.push(async () => {
      writing = false;
      await writer;
    });
    await eventually('some streamed entries published', () => (relay.position ?? 0) > 40, 30_000);
    await broker.stop();
    await eventually('the relay to notice', () => !relay.isReady, 60_000);
    const seenDown = written;
    await eventually('more writes while the broker is down', () => written > seenDown + 20);
    expect(relay.isReady).toBe(false);

    broker = await start({ port, controllerPort, dataDir });
    await eventually('the relay to be ready again', () => relay.isReady, 60_000);
    writing = false;
    await writer;
    await eventually(`the relay to catch up to ${written}`, () => relay.position === written, 60_000);

    const positions = await topicPositions(kafka);
    // In order (never decreasing), nothing missing; a duplicate after a failure would be allowed.
    expect(positions.every((p, i) => i === 0 || p >= positions[i - 1]!)).toBe(true);
    expect([...new Set(positions)]).toEqual(Array.from({ length: written }, (_, i) => i + 1));
    expect(lines.some((l) => /kafka reachable again/.test(l))).toBe(true);
  }, 240_000);
});
