import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StoreError, storeErrorCodes, type WriteOperation } from '@eggmesh/store';
import { openPrimaryStore } from '@eggmesh/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-group-'));
  dirs.push(dir);
  return join(dir, 'primary.db');
};
const create = (id: string, name: string): WriteOperation => ({
  op: 'create',
  entity: 'farm',
  id,
  payload: { name, farmType: 'local', zone: 'z' },
});

describe('group commit: concurrent commits share one SQLite transaction', () => {
  it('commits called in the same tick go in one transaction; each keeps its own outcome and position', async () => {
    const store = openPrimaryStore({ file: tempFile() });
    const taken = randomUUID();
    await store.commit([create(taken, 'first')]);
    const before = store.groupStats();
    const ids = Array.from({ length: 9 }, () => randomUUID());
    const outcomes = await Promise.allSettled([
      ...ids.slice(0, 4).map((id, i) => store.commit([create(id, `f${i}`)])),
      store.commit([create(ids[8]!, 'ok'), create(taken, 'again')]),
      ...ids.slice(4, 8).map((id, i) => store.commit([create(id, `g${i}`)])),
    ]);
    const after = store.groupStats();
    expect(after.transactions - before.transactions).toBe(1);
    expect(after.commits - before.commits).toBe(9);
    // The failing commit is rolled back alone, with its own error (operation 1 of its batch).
    const failed = outcomes[4]!;
    expect(failed.status).toBe('rejected');
    const error = (failed as PromiseRejectedResult).reason as StoreError;
    expect(error).toBeInstanceOf(StoreError);
    expect(error.code).toBe(storeErrorCodes.ALREADY_EXISTS);
    expect(error.index).toBe(1);
    expect(await store.get('farm', ids[8]!)).toBeNull();
    // The others are committed, in call order, with their own log positions.
    const positions = outcomes
      .filter((_o, i) => i !== 4)
      .map((o) => (o as PromiseFulfilledResult<{ position: number }>).value.position);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(new Set(positions).size).toBe(8);
    const log = await store.log.read(0, 100);
    expect(log.map((e) => e.id)).toEqual([taken, ...ids.slice(0, 8)]);
    expect(log.map((e) => e.position).slice(1)).toEqual(positions);
    await store.close();
  });

  it('a commit alone is not held back for company', async () => {
    const store = openPrimaryStore({ file: tempFile() });
    const before = store.groupStats();
    await store.commit([create(randomUUID(), 'alone')]);
    await store.commit([create(randomUUID(), 'alone again')]);
    expect(store.groupStats().transactions - before.transactions).toBe(2);
    await store.close();
  });

  it('every acknowledged commit of a group survives the process being killed right after', () => {
    const file = tempFile();
    const script = join(tmpdir(), `eggmesh-group-kill-${process.pid}-${randomUUID()}.mjs`);
    const storeEntry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    writeFileSync(
      script,
      `import { randomUUID } from 'node:crypto';
      import { openPrimaryStore } from ${JSON.stringify(storeEntry)};
      const store = openPrimaryStore({ file: process.argv[2] });
      const acked = [];
      await Promise.all(Array.from({ length: 50 }, async (_, i) => {
        const id = randomUUID();
        await store.commit([{ op: 'create', entity: 'farm', id, payload: { name: 'k' + i, farmType: 'local', zone: 'z' } }]);
        acked.push(id);
      }));
      process.stdout.write(JSON.stringify(acked));
      process.kill(process.pid, 'SIGKILL');`,
    );
    try {
      const run = spawnSync(process.execPath, [script, file], { encoding: 'utf8' });
      const acked = JSON.parse(run.stdout) as string[];
      expect(acked).toHaveLength(50);
      const reopened = openPrimaryStore({ file, readonly: true });
      for (const id of acked) expect(reopened.sync.latest('farm', id)?.deleted).toBe(0);
      void reopened.close();
    } finally {
      rmSync(script, { force: true });
    }
  });
});
