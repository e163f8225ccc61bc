import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { WriteOperation } from '@eggmesh/store';
import {
  currentGeneration,
  dataFiles,
  openDatabase,
  openPrimaryStore,
  openProjectionStore,
  ProjectionReader,
  type SqlitePrimaryStore,
} from '@eggmesh/store-sqlite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Projector } from '../src/index.js';
import {
  container,
  coop,
  create,
  DIST,
  deposit,
  dumpGeneration,
  ensureBuilt,
  farm,
  freePort,
  get,
  hen,
  idFor,
  lay,
  modelProjections,
  parseMetrics,
  REPO,
  type Service,
  snapshotOf,
  startProjector,
  stop,
  TestClock,
  tempDir,
  waitReady,
  withdrawal,
} from './helpers.js';

const run = promisify(execFile);
const T0 = Date.parse('2026-03-10T08:00:00Z');
const METRICS = [
  'eggmesh_projector_position',
  'eggmesh_log_head',
  'eggmesh_projector_lag_entries',
  'eggmesh_projector_lag_ms',
] as const;

/** A generation file's checkpoint; 0 while it has no tables yet. */
const startedCheckpoint = (file: string) => {
  try {
    return checkpointOf(file);
  } catch {
    return 0;
  }
};

const checkpointOf = (file: string) => {
  const db = openDatabase(file, { readonly: true });
  try {
    return db.prepare("SELECT value FROM projector_meta WHERE key = 'checkpoint'").pluck().get() as number;
  } finally {
    db.close();
  }
};

/** Waits until a generation file's checkpoint reaches `position` (or 10 s pass); returns the checkpoint. */
async function generationAt(file: string, position: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  while (checkpointOf(file) < position && Date.now() < deadline) await sleep(20);
  return checkpointOf(file);
}

beforeAll(ensureBuilt, 180_000);

describe('the projector service', () => {
  let dir: string;
  let files: ReturnType<typeof dataFiles>;
  const clock = new TestClock(T0);
  let primary: SqlitePrimaryStore;
  let service: Service;
  let n = 0;

  /** A few actors, then `count` events over them. */
  const events = (count: number): WriteOperation[] =>
    Array.from({ length: count }, () => {
      n++;
      const K = idFor('container', 1 + (n % 3));
      const H = idFor('hen', 1 + (n % 4));
      if (n % 3 === 0)
        return create('lay_report', idFor('lay', n), lay(H, idFor('farm', 1), n % 9, '2026-03-10T05:00:00Z'));
      if (n % 3 === 1) return create('storage_deposit', idFor('deposit', n), deposit(K, 1 + (n % 17)));
      return create('storage_withdrawal', idFor('withdrawal', n), withdrawal(K, 1 + (n % 11)));
    });

  const metrics = async () => {
    const res = await fetch(`${service.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const text = await res.text();
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(text).toContain('# TYPE eggmesh_projector_events_applied_total counter');
    for (const name of METRICS) {
      expect(text).toContain(`# TYPE ${name} gauge`);
      expect(text).toContain(`# HELP ${name} `);
    }
    return parseMetrics(text);
  };

  beforeAll(async () => {
    dir = tempDir('eggmesh-service-');
    files = dataFiles(dir);
    primary = openPrimaryStore({ file: files.primary, clock: clock.read });
    primary.commitSync([
      create('farm', idFor('farm', 1), farm()),
      create('coop', idFor('coop', 1), coop(idFor('farm', 1))),
      ...[1, 2, 3, 4].map((i) => create('hen', idFor('hen', i), hen(idFor('coop', 1)))),
      ...[1, 2, 3].map((i) => create('container', idFor('container', i), container(40 * i))),
    ]);
    primary.commitSync(events(50));
    service = startProjector(dir, await freePort(), {}, ['--batch', '7']);
    await waitReady(service, (r) => r.position === primary.headSync());
  });

  afterAll(async () => {
    await stop(service);
    await primary?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers /health and /ready with the lag', async () => {
    const health = await get(`${service.url}/health`);
    expect(health?.status).toBe(200);
    expect(JSON.parse(health!.text)).toMatchObject({ status: 'ok', service: 'projector' });
    const head = primary.headSync();
    const ready = await get(`${service.url}/ready`);
    expect(ready?.status).toBe(200);
    expect(JSON.parse(ready!.text)).toEqual({ status: 'ready', position: head, head, lag: 0 });
  });

  it('exposes position, head and lag in /metrics, and they move as events are applied', async () => {
    const before = await metrics();
    const head0 = primary.headSync();
    expect(before.get('eggmesh_projector_position')).toBe(head0);
    expect(before.get('eggmesh_log_head')).toBe(head0);
    expect(before.get('eggmesh_projector_lag_entries')).toBe(0);
    expect(before.get('eggmesh_projector_lag_ms')).toBe(0);

    // A burst the projector needs many batches of 7 for.
    clock.advance(60_000);
    primary.commitSync(events(6000));
    const head = primary.headSync();
    const sampledFrom = Date.now();
    const seen: Map<string, number>[] = [];
    for (let i = 0; i < 2000; i++) {
      const m = await metrics();
      seen.push(m);
      expect(m.get('eggmesh_log_head')).toBe(head);
      expect(m.get('eggmesh_projector_lag_entries')).toBe(head - m.get('eggmesh_projector_position')!);
      if (m.get('eggmesh_projector_position') === head) break;
      await sleep(10);
    }
    const positions = seen.map((m) => m.get('eggmesh_projector_position')!);
    expect(positions[positions.length - 1]).toBe(head);
    expect(positions[0]).toBeLessThan(head);
    expect(seen[0]!.get('eggmesh_projector_lag_entries')).toBeGreaterThan(0);
    // The oldest entry not applied was written at the test clock's time (months before now), give or
    // take the +1 ms steps that keep version times unique.
    expect(seen[0]!.get('eggmesh_projector_lag_ms')).toBeGreaterThan(sampledFrom - clock.now - 60_000);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const after = seen[seen.length - 1]!;
    expect(after.get('eggmesh_projector_lag_entries')).toBe(0);
    expect(after.get('eggmesh_projector_lag_ms')).toBe(0);
    expect(after.get('eggmesh_projector_events_applied_total')).toBe(
      before.get('eggmesh_projector_events_applied_total')! + (head - head0),
    );
    // Every applied entry's age went into the lag histogram. The test clock wrote these a minute past
    // the earlier entries, months before now: each lands beyond the last finite bound (60 s).
    const lag = (key: string) =>
      after.get(`eggmesh_projector_apply_lag_seconds${key}`)! -
      before.get(`eggmesh_projector_apply_lag_seconds${key}`)!;
    expect(lag('_count')).toBe(head - head0);
    expect(lag('_bucket{le="60"}')).toBe(0);
    expect(lag('_bucket{le="+Inf"}')).toBe(head - head0);
    expect(lag('_sum')).toBeGreaterThan((head - head0) * 60);
    expect(after.get('eggmesh_projector_batches_total')).toBeGreaterThanOrEqual(
      before.get('eggmesh_projector_batches_total')! + Math.ceil((head - head0) / 7),
    );
    const ready = await waitReady(service);
    expect(ready).toEqual({ status: 'ready', position: head, head, lag: 0 });
  });

  it('rebuilds into a new generation while the service runs; readers and the service switch to it', async () => {
    const reader = new ProjectionReader(files.projectionsDir, 0);
    const previous = currentGeneration(files.projectionsDir)!;
    const head = primary.headSync();
    const ref = clock.now;
    const before = snapshotOf(reader, ref);
    expect(before).toEqual(modelProjections(primary.readLogSync(0, Number.MAX_SAFE_INTEGER), ref));
    expect(before.size).toBe(8);

    const { stdout } = await run(process.execPath, [join(DIST, 'rebuild.js'), '--json', '--batch', '500'], {
      cwd: REPO,
      env: { ...process.env, EGGMESH_DATA_DIR: dir, EGGMESH_LOG_LEVEL: 'warn' },
      timeout: 30_000,
    });
    const summary = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(summary).toMatchObject({ previous, events: head });
    expect(summary.eventsPerSecond).toBeGreaterThan(0);
    expect(summary.seconds).toBeGreaterThanOrEqual(0);
    // Node alone takes tens of MiB; a figure in KiB or bytes would be far larger.
    expect(summary.peakRssMiB).toBeGreaterThan(20);
    expect(summary.peakRssMiB).toBeLessThan(4096);
    const generation = summary.generation as string;
    expect(generation).not.toBe(previous);
    expect(readFileSync(join(files.projectionsDir, 'CURRENT'), 'utf8').trim()).toBe(generation);
    expect(currentGeneration(files.projectionsDir)).toBe(generation);
    expect(existsSync(join(files.projectionsDir, previous))).toBe(true);

    // The reader now serves the new generation, with the same values.
    expect(reader.checkpoint()).toBe(head);
    expect(snapshotOf(reader, ref)).toEqual(before);

    // The running service follows: the rebuild has exited, so only the service can move the new
    // generation's checkpoint. (Until it notices CURRENT, it may also still write to the old one.)
    clock.advance(60_000);
    primary.commitSync([create('container', idFor('container', 7), container(10)), ...events(30)]);
    const newGen = join(files.projectionsDir, generation);
    expect(await generationAt(newGen, primary.headSync())).toBe(primary.headSync());
    // Once switched, it no longer writes to the old generation.
    const oldCheckpoint = checkpointOf(join(files.projectionsDir, previous));
    primary.commitSync(events(30));
    const newHead = primary.headSync();
    expect(await waitReady(service, (r) => r.position === newHead)).toEqual({
      status: 'ready',
      position: newHead,
      head: newHead,
      lag: 0,
    });
    expect(checkpointOf(newGen)).toBe(newHead);
    expect(checkpointOf(join(files.projectionsDir, previous))).toBe(oldCheckpoint);
    expect(reader.checkpoint()).toBe(newHead);
    const entries = primary.readLogSync(0, Number.MAX_SAFE_INTEGER);
    expect(snapshotOf(reader, clock.now)).toEqual(modelProjections(entries, clock.now));
    expect(snapshotOf(reader, ref, ref)).toEqual(before);
    reader.close();
  });

  const rebuild = (args: string[]) =>
    run(process.execPath, [join(DIST, 'rebuild.js'), ...args], {
      cwd: REPO,
      env: { ...process.env, EGGMESH_DATA_DIR: dir, EGGMESH_LOG_LEVEL: 'warn' },
      timeout: 30_000,
    });

  it('rebuilds while writes stream in: readers keep being served, and the result equals a clean rebuild', async () => {
    const reader = new ProjectionReader(files.projectionsDir, 0);
    const previous = currentGeneration(files.projectionsDir)!;
    let writing = true;
    const servedCheckpoints: number[] = [];
    const writer = (async () => {
      while (writing) {
        clock.advance(1000);
        primary.commitSync(events(5));
        servedCheckpoints.push(reader.checkpoint());
        expect(reader.get('container_inventory', idFor('container', 1))).not.toBeNull();
        await sleep(20);
      }
    })();
    const { stdout, stderr } = await rebuild(['--json', '--batch', '50']);
    writing = false;
    await writer;
    const summary = JSON.parse(stdout.trim().split('\n').pop()!) as { generation: string; events: number };
    expect(summary).toMatchObject({ previous });
    expect(stderr).toMatch(/rebuild \[#+\] 100% .* events\/s/);
    // The index build at the end says what it is doing, and how long it took.
    expect(stderr).toMatch(/creating the indexes and syncing the new generation…\n/);
    expect(stderr).toMatch(/the new generation is indexed and synced \(\d+\.\d s\)\n/);
    expect(currentGeneration(files.projectionsDir)).toBe(summary.generation);
    expect(servedCheckpoints.length).toBeGreaterThan(3);
    expect(Math.min(...servedCheckpoints)).toBeGreaterThan(0);

    const head = primary.headSync();
    expect(summary.events).toBeLessThanOrEqual(head);
    // /ready reports the generation the service writes; it may reach the head on the old one before it
    // notices CURRENT (it checks every 250 ms), so wait for the new generation itself.
    expect(await generationAt(join(files.projectionsDir, summary.generation), head)).toBe(head);
    expect(await waitReady(service, (r) => r.position === head)).toMatchObject({ lag: 0 });
    const rebuilt = openProjectionStore({ dir: join(dir, 'clean') });
    await new Projector(primary.log, rebuilt, 1_000_000).catchUp();
    const served = openDatabase(join(files.projectionsDir, summary.generation), { readonly: true });
    try {
      expect(dumpGeneration(served)).toEqual(dumpGeneration(rebuilt.db));
    } finally {
      served.close();
      await rebuilt.close();
    }
    expect(reader.checkpoint()).toBe(head);
    reader.close();
  });

  it('a rebuild killed half-way leaves CURRENT alone; the next one removes its file', async () => {
    const current = currentGeneration(files.projectionsDir)!;
    const existing = new Set(readdirSync(files.projectionsDir));
    const child = spawn(process.execPath, [join(DIST, 'rebuild.js'), '--batch', '1', '--quiet'], {
      cwd: REPO,
      env: { ...process.env, EGGMESH_DATA_DIR: dir },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const deadline = Date.now() + 10_000;
    let orphan: string | undefined;
    while (!orphan && Date.now() < deadline) {
      orphan = readdirSync(files.projectionsDir).find(
        (f) =>
          /^gen-\d+\.db$/.test(f) && !existing.has(f) && startedCheckpoint(join(files.projectionsDir, f)) > 0,
      );
      if (!orphan) await sleep(10);
    }
    child.kill('SIGKILL');
    await exited;
    expect(orphan).toBeDefined();
    expect(checkpointOf(join(files.projectionsDir, orphan!))).toBeLessThan(primary.headSync());
    expect(currentGeneration(files.projectionsDir)).toBe(current);

    const { stdout } = await rebuild(['--json']);
    const summary = JSON.parse(stdout.trim().split('\n').pop()!) as { removed: string[]; previous: string };
    expect(summary.previous).toBe(current);
    expect(summary.removed).toContain(orphan);
    expect(existsSync(join(files.projectionsDir, orphan!))).toBe(false);
    expect(await waitReady(service)).toMatchObject({ lag: 0 });
  });

  it('runs one rebuild at a time: a second one is refused and the first completes', async () => {
    const existing = new Set(readdirSync(files.projectionsDir));
    const first = spawn(process.execPath, [join(DIST, 'rebuild.js'), '--batch', '1', '--json'], {
      cwd: REPO,
      env: { ...process.env, EGGMESH_DATA_DIR: dir },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let stdout = '';
    first.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    const exited = new Promise((resolve) => first.once('exit', resolve));
    const deadline = Date.now() + 10_000;
    const started = () =>
      readdirSync(files.projectionsDir).some(
        (f) =>
          /^gen-\d+\.db$/.test(f) && !existing.has(f) && startedCheckpoint(join(files.projectionsDir, f)) > 0,
      );
    while (!started() && Date.now() < deadline) await sleep(10);
    expect(first.exitCode).toBeNull();

    const second = await rebuild(['--json']).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(second.code).toBe(3);
    expect(second.stderr).toContain('another rebuild is running');

    expect(await exited).toBe(0);
    const summary = JSON.parse(stdout.trim().split('\n').pop()!) as { generation: string };
    expect(currentGeneration(files.projectionsDir)).toBe(summary.generation);
    expect(existsSync(join(files.projectionsDir, summary.generation))).toBe(true);
    const head = primary.headSync();
    expect(await waitReady(service, (r) => r.position === head)).toMatchObject({ lag: 0 });
    expect(await generationAt(join(files.projectionsDir, summary.generation), head)).toBe(head);
  });

  it('the rebuild CLI explains itself and rejects a bad --batch', async () => {
    const help = await rebuild(['--help']);
    expect(help.stdout).toContain('Usage: pnpm rebuild-projections');
    await expect(rebuild(['--batch', '0'])).rejects.toMatchObject({ code: 2 });
    const text = await rebuild([]);
    expect(text.stdout).toMatch(
      /^rebuilt [\d,]+ events in [\d.]+ s \([\d,]+ events\/s, peak RSS [\d,]+ MiB\) into gen-\d+\.db$/m,
    );
    expect(await waitReady(service)).toMatchObject({ lag: 0 });
  });

  it('stops on SIGTERM with exit code 0', async () => {
    service.child.kill('SIGTERM');
    // Past the shutdown timeout it would exit 1.
    expect(await service.exited).toBe(0);
  });
});

describe('before the write service has created the primary', () => {
  let service: Service | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await stop(service);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('waits for the primary, then projects it', async () => {
    dir = tempDir('eggmesh-service-wait-');
    service = startProjector(dir, await freePort());
    const deadline = Date.now() + 10_000;
    while (!service.output().includes('waiting for') && Date.now() < deadline) await sleep(20);
    expect(service.output()).toContain('start the write-api first');
    expect(await get(`${service.url}/health`)).toBeNull();

    const primary = openPrimaryStore({ file: dataFiles(dir).primary });
    try {
      primary.commitSync([create('farm', idFor('farm', 1), farm('homestead'))]);
      expect(await waitReady(service)).toEqual({ status: 'ready', position: 1, head: 1, lag: 0 });
      const reader = new ProjectionReader(dataFiles(dir).projectionsDir, 0);
      expect(reader.get('farm_output', idFor('farm', 1))?.payload).toMatchObject({ farm_type: 'homestead' });
      reader.close();
    } finally {
      await primary.close();
    }
  });
});

describe('the idle projector', () => {
  it('sleeps until the primary changes: a commit is applied long before the idle poll would fire', async () => {
    const dir = tempDir('eggmesh-service-idle-');
    const primary = openPrimaryStore({ file: dataFiles(dir).primary });
    // Ten minutes: only a change event can wake it within this test's time.
    const service = startProjector(dir, await freePort(), {}, ['--idle-poll-ms', '600000']);
    try {
      primary.commitSync([create('farm', idFor('farm', 1), farm('homestead'))]);
      expect(await waitReady(service, (r) => r.position === 1)).toMatchObject({ position: 1, lag: 0 });
      // Idle now; the next commit must wake it again.
      await sleep(300);
      primary.commitSync([create('farm', idFor('farm', 2), farm('megafarm'))]);
      expect(await waitReady(service, (r) => r.position === 2)).toMatchObject({ position: 2, lag: 0 });
      const reader = new ProjectionReader(dataFiles(dir).projectionsDir, 0);
      expect(reader.get('farm_output', idFor('farm', 2))?.payload).toMatchObject({ farm_type: 'megafarm' });
      reader.close();
    } finally {
      await stop(service);
      await primary.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
