import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  currentGeneration,
  dataFiles,
  openDatabase,
  openPrimaryStore,
  openProjectionStore,
  ProjectionReader,
  type SqlitePrimaryStore,
} from '@eggmesh/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STARTUP_MS } from '../../../infra/test/patience.js';
import { Projector } from '../src/index.js';
import {
  dumpGeneration,
  ensureBuilt,
  freePort,
  modelProjections,
  Rng,
  type Service,
  snapshotOf,
  startProjector,
  stop,
  TestClock,
  tempDir,
  WriteGenerator,
  waitReady,
} from './helpers.js';

let dir: string;
let files: ReturnType<typeof dataFiles>;
let primary: SqlitePrimaryStore | undefined;
let service: Service | undefined;
const others: Service[] = [];

beforeAll(async () => {
  await ensureBuilt();
  dir = tempDir('eggmesh-crash-');
  files = dataFiles(dir);
}, 180_000);
afterAll(async () => {
  await stop(service);
  for (const other of others) await stop(other);
  await primary?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The served generation and a clean one-batch rebuild of the same log, row for row. */
async function expectEqualToRebuild(dataDir: string, log: SqlitePrimaryStore, head: number) {
  const projectionsDir = dataFiles(dataDir).projectionsDir;
  const generation = currentGeneration(projectionsDir);
  expect(generation).not.toBeNull();
  const served = openDatabase(join(projectionsDir, generation!), { readonly: true });
  const rebuilt = openProjectionStore({ dir: join(dataDir, `rebuilt-${head}`) });
  await new Projector(log.log, rebuilt, 1_000_000).catchUp();
  try {
    const dump = dumpGeneration(served);
    expect(dump.checkpoint).toBe(head);
    expect(dump).toEqual(dumpGeneration(rebuilt.db));
  } finally {
    served.close();
    await rebuilt.close();
  }
}

// Each test starts the projector up to eight times: CPU work that a loaded machine stretches many times over.
const CRASH_LOOP_MS = 4 * STARTUP_MS;

describe('SIGKILL while events stream in', () => {
  it('converges to exactly the projections of a clean rebuild', { timeout: CRASH_LOOP_MS }, async () => {
    const rng = new Rng(20260310);
    const clock = new TestClock(Date.parse('2026-03-01T06:00:00Z'));
    const generator = new WriteGenerator(rng, clock);
    primary = openPrimaryStore({ file: files.primary, clock: clock.read });
    const writer = primary;
    for (let i = 0; i < 50; i++) writer.commitSync(generator.commit());

    const port = await freePort();
    const start = () => startProjector(dir, port, {}, ['--batch', '7']);
    service = start();

    // The writer streams commits until told to stop.
    let writing = true;
    const streamed = (async () => {
      let n = 0;
      while (writing) {
        writer.commitSync(generator.commit());
        if (++n % 2 === 0) await sleep(2);
      }
      return n;
    })();

    const reader = new ProjectionReader(files.projectionsDir, 0);
    const kills: { position: number; head: number; waited: boolean }[] = [];
    try {
      for (let k = 0; k < 7; k++) {
        // Some kills hit a process that is still starting up; the others one busy applying batches.
        const waited = rng.chance(0.6);
        if (waited) await waitReady(service, (r) => r.position > 0);
        await sleep(waited ? rng.int(20, 350) : rng.int(150, 1000));
        await stop(service, 'SIGKILL');
        kills.push({ position: reader.checkpoint(), head: writer.headSync(), waited });
        service = start();
      }
    } finally {
      writing = false;
    }
    const commits = await streamed;
    const head = writer.headSync();
    const ready = await waitReady(service, (r) => r.position === head && r.lag === 0, STARTUP_MS);
    expect(ready).toMatchObject({ status: 'ready', position: head, head, lag: 0 });
    expect(commits).toBeGreaterThan(100);
    expect(kills.filter((k) => k.position < k.head).length).toBeGreaterThan(0);

    // Stop the service cleanly, then compare its generation with a clean rebuild, row for row.
    await stop(service, 'SIGTERM');
    expect(await service.exited).toBe(0);
    await expectEqualToRebuild(dir, writer, head);

    // And every count equals the naive model of the log.
    const entries = writer.readLogSync(0, Number.MAX_SAFE_INTEGER);
    const ref = entries[entries.length - 1]!.createdAt;
    const snapshot = snapshotOf(reader, ref);
    expect(snapshot.size).toBeGreaterThan(0);
    expect(snapshot).toEqual(modelProjections(entries, ref));
    reader.close();
  });

  it('two projector processes on one data directory (started at once, one killed) converge too', {
    timeout: CRASH_LOOP_MS,
  }, async () => {
    const rng = new Rng(7);
    const twoDir = tempDir('eggmesh-crash-two-');
    const clock = new TestClock(Date.parse('2026-03-01T06:00:00Z'));
    const generator = new WriteGenerator(rng, clock);
    const writer = openPrimaryStore({ file: dataFiles(twoDir).primary, clock: clock.read });
    try {
      for (let i = 0; i < 20; i++) writer.commitSync(generator.commit());
      const ports = [await freePort(), await freePort()];
      const start = (i: number) => {
        const s = startProjector(twoDir, ports[i]!, {}, ['--batch', String(5 + 6 * i)]);
        others.push(s);
        return s;
      };
      const pair = [start(0), start(1)];
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 150; i++) {
          writer.commitSync(generator.commit());
          if (i % 3 === 0) await sleep(2);
        }
        const victim = rng.int(0, 1);
        await stop(pair[victim], 'SIGKILL');
        pair[victim] = start(victim);
      }
      const head = writer.headSync();
      for (const s of pair) {
        expect(await waitReady(s, (r) => r.position === head, STARTUP_MS)).toMatchObject({ lag: 0 });
      }
      for (const s of pair) {
        await stop(s, 'SIGTERM');
        expect(await s.exited).toBe(0);
      }
      await expectEqualToRebuild(twoDir, writer, head);
      const entries = writer.readLogSync(0, Number.MAX_SAFE_INTEGER);
      const reader = new ProjectionReader(dataFiles(twoDir).projectionsDir, 0);
      const ref = entries[entries.length - 1]!.createdAt;
      expect(snapshotOf(reader, ref)).toEqual(modelProjections(entries, ref));
      reader.close();
    } finally {
      await writer.close();
      rmSync(twoDir, { recursive: true, force: true });
    }
  });
});
