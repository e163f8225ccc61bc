import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogEntry, WriteOperation } from '@eggmesh/store';
import { openPrimaryStore, type SqlitePrimaryStore } from '@eggmesh/store-sqlite';
import { inject } from 'vitest';
import { sharedKafkaBrokers } from '../../../infra/test/shared-servers.js';
import { decodeEntry, type KafkaClient, kafkajsClient, type RelaySource } from '../src/index.js';

/** The run's shared broker (infra/kafka/vitest-global-setup.ts), started on first use. */
const brokers = await sharedKafkaBrokers();
export const kafkaBrokers = (): string => brokers;
export const kafkaServer = (): string => inject('kafkaServer');

/** A topic name of its own for one test. */
export const freshTopic = (): string => `t.${randomUUID().replace(/-/g, '').slice(0, 20)}`;

export function client(topic: string, brokers = kafkaBrokers()): KafkaClient {
  return kafkajsClient({ brokers: [brokers], topic, clientId: 'eggmesh-test' });
}

export interface TempPrimary {
  readonly dir: string;
  readonly file: string;
  readonly store: SqlitePrimaryStore;
  /** Commits `count` farm creations, one commit each; answers their positions. */
  write(count: number): Promise<number[]>;
  dispose(): Promise<void>;
}

export function tempPrimary(): TempPrimary {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-kafka-test-'));
  const file = join(dir, 'primary.db');
  const store = openPrimaryStore({ file });
  return {
    dir,
    file,
    store,
    async write(count) {
      const positions: number[] = [];
      for (let i = 0; i < count; i += 1) {
        const op: WriteOperation = {
          op: 'create',
          entity: 'farm',
          id: randomUUID(),
          payload: { name: `Farm ${i}`, farm_type: 'local_farm', zone: 'north' },
        };
        positions.push((await store.commit([op])).position);
      }
      return positions;
    },
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The primary's log as the relay reads it. */
export function sourceOf(store: SqlitePrimaryStore): RelaySource {
  return {
    read: (after, limit) => store.log.read(after, limit),
    head: () => store.log.head(),
    async waitBeyond(after, timeoutMs, signal) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline && !signal?.aborted) {
        if ((await store.log.head()) > after) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    },
  };
}

/** Every message of partition 0 in offset order (read by a fresh group from offset 0), as positions. */
export async function topicPositions(kafka: KafkaClient): Promise<number[]> {
  const { high } = await kafka.offsets();
  if (high === 0) return [];
  const consumer = kafka.consumer(`eggmesh-test-${randomUUID()}`);
  const positions: number[] = [];
  let last = -1;
  try {
    await consumer.start(0, (batch) => {
      for (const m of batch.messages) {
        if (m.offset !== last + 1) continue;
        last = m.offset;
        positions.push(decodeEntry(m.value).position);
      }
    });
    await eventually(`offsets up to ${high - 1}`, () => last >= high - 1);
  } finally {
    await consumer.close();
  }
  return positions;
}

/** Polls `check` until it returns true; throws with `what` after `timeoutMs`. */
export async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export const positionsOf = (entries: readonly LogEntry[]) => entries.map((e) => e.position);
