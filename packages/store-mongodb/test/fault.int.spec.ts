import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isStoreError, type StoredRecord, storeErrorCodes, type WriteOperation } from '@eggmesh/store';
import { openMongoPrimaryStore } from '@eggmesh/store-mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningServer, serverName, start } from '../../../infra/mongodb/server.mjs';

const create = (name: string): WriteOperation => ({
  op: 'create',
  entity: 'farm',
  id: randomUUID(),
  payload: { name, farm_type: 'local_farm', zone: 'north' },
});

describe(`MongoDB store when its server dies (${serverName}, file-backed)`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'eggmesh-mongo-fault-'));
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('rejects commits with STORE_UNAVAILABLE while down, loses nothing acknowledged, resumes after restart', async () => {
    server = await start({ dataDir });
    const port = server.port;
    let killDuringCommit = false;
    const store = await openMongoPrimaryStore({
      uri: server.uri,
      dbName: 'fault',
      serverSelectionTimeoutMS: 1000,
      hooks: {
        async afterAllocate() {
          // The server dies between the position allocation and the log record.
          if (killDuringCommit) await server?.kill();
        },
      },
    });
    const acknowledged: { position: number; record: StoredRecord }[] = [];
    for (let i = 0; i < 10; i++) {
      const result = await store.commit([create(`before-${i}`)]);
      acknowledged.push({ position: result.position, record: result.records[0]! });
    }

    killDuringCommit = true;
    const midway = await store.commit([create('midway')]).catch((e: unknown) => e);
    expect(isStoreError(midway, storeErrorCodes.UNAVAILABLE)).toBe(true);
    killDuringCommit = false;
    const down = await store.commit([create('down')]).catch((e: unknown) => e);
    expect(isStoreError(down, storeErrorCodes.UNAVAILABLE)).toBe(true);
    expect(isStoreError(await store.ping().catch((e: unknown) => e), storeErrorCodes.UNAVAILABLE)).toBe(true);
    expect(isStoreError(await store.log.head().catch((e: unknown) => e), storeErrorCodes.UNAVAILABLE)).toBe(
      true,
    );

    // Same port, same file: the store's client reconnects by itself.
    server = await start({ dataDir, port });
    await store.ping();
    const after = await store.commit([create('after')]);
    acknowledged.push({ position: after.position, record: after.records[0]! });

    const reader = await openMongoPrimaryStore({ uri: server.uri, dbName: 'fault', gapTimeoutMs: 0 });
    const entries = await reader.log.read(0, 100);
    for (const { position, record } of acknowledged) {
      expect(entries.find((e) => e.position === position)).toMatchObject({ id: record.id, op: 'create' });
      expect(await reader.get('farm', record.id)).toEqual(record);
    }
    // The commit cut off midway and the one refused while down are in neither the log nor the data.
    const names = entries.map((e) => e.payload?.name);
    expect(names).not.toContain('midway');
    expect(names).not.toContain('down');
    expect((await reader.list('farm', { limit: 100 })).map((r) => r.payload.name)).not.toContain('midway');
    expect(entries.map((e) => e.payload?.name)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `before-${i}`),
      'after',
    ]);
    await reader.close();
    await store.close();
  });
});
