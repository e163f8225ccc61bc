import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { materialize, projectionNames } from '@eggmesh/projections';
import type { EntityName } from '@eggmesh/schema';
import type { LogEntry, WriteOperation } from '@eggmesh/store';
import { type ProjectionReader, projectionEntities, type SqliteDatabase } from '@eggmesh/store-sqlite';
import { STARTUP_MS } from '../../../infra/test/patience.js';
import { freePort } from '../../../infra/test/process.js';

export { freePort };

export type Payload = Record<string, unknown>;

export const DAY = 86_400_000;
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const DIST = join(REPO, 'services/projector/dist');

/** A temp directory under the OS temp dir. */
export function tempDir(prefix = 'eggmesh-projector-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A wall clock the test sets: every call returns the same instant until the test moves it. */
export class TestClock {
  constructor(public now: number) {}
  readonly read = (): number => this.now;
  set(ms: number): void {
    this.now = ms;
  }
  advance(ms: number): void {
    this.now += ms;
  }
}

/** A deterministic UUID-shaped id from a label (readable in failure output). */
export function idFor(kind: string, n: number): string {
  const hex = Buffer.from(`${kind}${n}`).toString('hex').padEnd(12, '0').slice(0, 12);
  const k = (kind.charCodeAt(0) % 16).toString(16);
  return `${k}${String(n).padStart(7, '0')}-0000-4000-8000-${hex}`;
}

// ---------------------------------------------------------------------------------------------
// Write operations
// ---------------------------------------------------------------------------------------------

export const create = (entity: EntityName, id: string, payload: Payload): WriteOperation => ({
  op: 'create',
  entity,
  id,
  payload,
});
export const update = (entity: EntityName, id: string, payload: Payload): WriteOperation => ({
  op: 'update',
  entity,
  id,
  payload,
});
export const remove = (entity: EntityName, id: string): WriteOperation => ({ op: 'delete', entity, id });

export const iso = (ms: number): string => new Date(ms).toISOString();

export const farm = (farm_type = 'megafarm', zone = 'north'): Payload => ({ name: 'Farm', farm_type, zone });
export const coop = (farm_id: string, capacity = 50): Payload => ({
  name: 'Coop',
  farm_id,
  capacity,
  coop_type: 'barn',
});
export const hen = (coop_id: string, status?: string): Payload => ({
  name: 'Hen',
  coop_id,
  breed: 'sussex',
  ...(status === undefined ? {} : { status }),
});
export const container = (capacity: number, zone = 'east'): Payload => ({
  name: 'Container',
  container_type: 'warehouse',
  capacity,
  zone,
});
export const consumer = (): Payload => ({ name: 'Consumer', consumer_type: 'bakery', zone: 'west' });
export const deposit = (container_id: string, eggs: number, ts = '2026-03-10T06:00:00Z'): Payload => ({
  container_id,
  source_type: 'farm',
  source_id: '00000000-0000-4000-8000-00000000f00d',
  eggs,
  timestamp: ts,
});
export const withdrawal = (container_id: string, eggs: number, ts = '2026-03-10T06:00:00Z'): Payload => ({
  container_id,
  reason: 'spoilage',
  eggs,
  timestamp: ts,
});
export const transfer = (
  source_container_id: string,
  dest_container_id: string,
  eggs: number,
  ts = '2026-03-10T06:00:00Z',
): Payload => ({ source_container_id, dest_container_id, eggs, timestamp: ts, transport_method: 'van' });
export const consumption = (
  container_id: string,
  eggs: number,
  consumer_id = '00000000-0000-4000-8000-0000000c0de0',
  ts = '2026-03-10T06:00:00Z',
): Payload => ({ consumer_id, container_id, eggs, timestamp: ts, purpose: 'baking' });
export const lay = (
  hen_id: string,
  farm_id: string,
  eggs: number,
  timestamp: string,
  quality?: string,
  coop_id = '00000000-0000-4000-8000-0000000c0000',
): Payload => ({
  hen_id,
  coop_id,
  farm_id,
  eggs,
  timestamp,
  ...(quality === undefined ? {} : { quality }),
});

// ---------------------------------------------------------------------------------------------
// The naive model: replays the log in memory with straightforward code (no projector code).
// ---------------------------------------------------------------------------------------------

/** `${entity}/${id}` → the public document as of the reference time. */
export type ProjectionSnapshot = Map<string, Payload>;

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
const GOOD = new Set(['grade_a', 'double_yolk']);

// UTC calendar-day start of an instant, from calendar fields.
const utcDayStart = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
};

interface Windows {
  today: number;
  week: number;
  month: number;
  last28: number;
}

// Sums eggs of reports whose timestamp is on the reference day or the n-1 days before it.
function windowsOf(reports: readonly Payload[], ref: number): Windows {
  const start = utcDayStart(ref);
  const end = start + DAY;
  const within = (days: number) =>
    reports
      .filter((r) => {
        const t = Date.parse(String(r.timestamp));
        return t >= start - (days - 1) * DAY && t < end;
      })
      .reduce((sum, r) => sum + Number(r.eggs), 0);
  return { today: within(1), week: within(7), month: within(30), last28: within(28) };
}

/**
 * The projections the log entries imply, as of `ref`: replays `entries` (already cut to what the
 * log held at the time asked) in log order. Egg windows, totals and hen counts are computed from
 * the live actors and events at the end; only `current_eggs` needs the ordered, clamped replay.
 */
export function modelProjections(entries: readonly LogEntry[], ref: number): ProjectionSnapshot {
  const actors = new Map<string, { live: boolean; payload: Payload }>();
  const events = new Map<string, Payload>();
  const current = new Map<string, number>();
  const addCurrent = (containerId: unknown, delta: number) => {
    if (typeof containerId !== 'string') return;
    current.set(containerId, Math.max(0, (current.get(containerId) ?? 0) + delta));
  };
  // The signed moves of current_eggs one event payload makes, in effect order (source before destination).
  const moves = (entity: EntityName, p: Payload): [unknown, number][] => {
    const eggs = Number(p.eggs);
    switch (entity) {
      case 'storage_deposit':
        return [[p.container_id, eggs]];
      case 'storage_withdrawal':
      case 'consumption_report':
        return [[p.container_id, -eggs]];
      case 'container_transfer':
        return [
          [p.source_container_id, -eggs],
          [p.dest_container_id, eggs],
        ];
      default:
        return [];
    }
  };

  for (const e of entries) {
    const key = `${e.entity}/${e.id}`;
    if (['farm', 'coop', 'hen', 'container', 'consumer'].includes(e.entity)) {
      const before = actors.get(key);
      if (e.op === 'delete') actors.set(key, { live: false, payload: before?.payload ?? {} });
      else actors.set(key, { live: true, payload: e.payload ?? {} });
      continue;
    }
    const previous = events.get(key);
    if (previous) for (const [c, d] of moves(e.entity, previous)) addCurrent(c, -d);
    if (e.op === 'delete') events.delete(key);
    else {
      events.set(key, e.payload ?? {});
      for (const [c, d] of moves(e.entity, e.payload ?? {})) addCurrent(c, d);
    }
  }

  const live = (entity: string) =>
    [...actors.entries()]
      .filter(([k, a]) => k.startsWith(`${entity}/`) && a.live)
      .map(([k, a]) => ({ id: k.slice(entity.length + 1), payload: a.payload }));
  const liveEvents = (entity: string) =>
    [...events.entries()].filter(([k]) => k.startsWith(`${entity}/`)).map(([, p]) => p);
  const actor = (entity: string, id: unknown) => {
    const a = actors.get(`${entity}/${String(id)}`);
    return a?.live ? a.payload : null;
  };
  // The capacity a container last had (kept when it is deleted).
  const capacityOf = (id: string) => {
    const a = actors.get(`container/${id}`);
    return a ? Number(a.payload.capacity) : null;
  };
  const sumWhere = (entity: string, field: string, id: string) =>
    liveEvents(entity)
      .filter((p) => p[field] === id)
      .reduce((s, p) => s + Number(p.eggs), 0);

  const out: ProjectionSnapshot = new Map();
  for (const { id } of live('container')) {
    const cur = current.get(id) ?? 0;
    const capacity = capacityOf(id);
    out.set(`container_inventory/${id}`, {
      id,
      container_id: id,
      current_eggs: cur,
      total_deposits: sumWhere('storage_deposit', 'container_id', id),
      total_withdrawals: sumWhere('storage_withdrawal', 'container_id', id),
      total_transfers_in: sumWhere('container_transfer', 'dest_container_id', id),
      total_transfers_out: sumWhere('container_transfer', 'source_container_id', id),
      total_consumed: sumWhere('consumption_report', 'container_id', id),
      utilization_pct: capacity !== null && capacity >= 1 ? r4(Math.min(100, (cur / capacity) * 100)) : 0,
    });
  }
  const reports = liveEvents('lay_report');
  for (const { id, payload } of live('hen')) {
    const mine = reports.filter((r) => r.hen_id === id);
    const total = mine.reduce((s, r) => s + Number(r.eggs), 0);
    const good = mine
      .filter((r) => r.quality === undefined || GOOD.has(String(r.quality)))
      .reduce((s, r) => s + Number(r.eggs), 0);
    const w = windowsOf(mine, ref);
    const coopPayload = actor('coop', payload.coop_id);
    out.set(`hen_productivity/${id}`, {
      id,
      hen_id: id,
      farm_id: coopPayload ? (coopPayload.farm_id as string) : null,
      eggs_today: w.today,
      eggs_week: w.week,
      eggs_month: w.month,
      total_eggs: total,
      avg_per_week: r4(w.last28 / 4),
      quality_rate: total > 0 ? r4(good / total) : 0,
    });
  }
  const hens = live('hen');
  for (const { id, payload } of live('farm')) {
    const mine = hens.filter((h) => actor('coop', h.payload.coop_id)?.farm_id === id);
    const active = mine.filter((h) => h.payload.status === undefined || h.payload.status === 'active').length;
    const w = windowsOf(
      reports.filter((r) => r.farm_id === id),
      ref,
    );
    out.set(`farm_output/${id}`, {
      id,
      farm_id: id,
      farm_type: payload.farm_type,
      eggs_today: w.today,
      eggs_week: w.week,
      eggs_month: w.month,
      active_hens: active,
      total_hens: mine.length,
      avg_per_hen_per_week: r4(w.last28 / 4 / Math.max(1, active)),
    });
  }
  return out;
}

/** The model as of `at`: only the entries the log held at that time, windows relative to `at`. */
export function modelAt(entries: readonly LogEntry[], at: number): ProjectionSnapshot {
  return modelProjections(
    entries.filter((e) => e.createdAt <= at),
    at,
  );
}

/** Every visible projection document a reader serves, materialized as of `ref` (with `at`: as of then). */
export function snapshotOf(reader: ProjectionReader, ref: number, at?: number): ProjectionSnapshot {
  const out: ProjectionSnapshot = new Map();
  for (const entity of projectionNames) {
    for (const record of reader.list(entity, { limit: 1_000_000, at })) {
      out.set(`${entity}/${record.id}`, materialize(entity, record.payload, ref));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading projection files directly
// ---------------------------------------------------------------------------------------------

/** Every row the projector wrote to a generation: versions, current rows, state and checkpoint. */
export function dumpGeneration(db: SqliteDatabase) {
  const out: Record<string, unknown> = {};
  for (const entity of projectionEntities) {
    out[`${entity}_versions`] = (
      db
        .prepare(`SELECT id, created_at, deleted, payload FROM ${entity}_versions ORDER BY id, created_at`)
        .all() as {
        payload: string | null;
      }[]
    ).map((r) => ({ ...r, payload: r.payload === null ? null : JSON.parse(r.payload) }));
    out[`${entity}_current`] = (
      db.prepare(`SELECT id, created_at, payload FROM ${entity}_current ORDER BY id`).all() as {
        payload: string;
      }[]
    ).map((r) => ({ ...r, payload: JSON.parse(r.payload) }));
  }
  out.state = (
    db.prepare('SELECT kind, id, value, ref FROM projector_state ORDER BY kind, id').all() as {
      value: string;
    }[]
  ).map((r) => ({ ...r, value: JSON.parse(r.value) }));
  out.checkpoint = db.prepare("SELECT value FROM projector_meta WHERE key = 'checkpoint'").pluck().get();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

const newestMtime = (dir: string): number => {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const s = statSync(path);
    newest = Math.max(newest, s.isDirectory() ? newestMtime(path) : s.mtimeMs);
  }
  return newest;
};

/**
 * Builds the projector (and what it references) when dist/main.js is missing or a source file is
 * newer than every output. A lock directory keeps test files running in parallel from building at once.
 */
export async function ensureBuilt(): Promise<void> {
  const lock = join(tmpdir(), 'eggmesh-projector-build.lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`build lock ${lock} held too long`);
      await sleep(200);
    }
  }
  try {
    const main = join(DIST, 'main.js');
    // tsc -b re-emits only the files that changed, so compare the newest source with the newest output.
    const stale = !existsSync(main) || newestMtime(join(REPO, 'services/projector/src')) > newestMtime(DIST);
    if (!stale) return;
    try {
      execFileSync('npx', ['tsc', '-b', 'services/projector'], {
        cwd: REPO,
        stdio: 'pipe',
        timeout: 110_000,
      });
    } catch (error) {
      if (!existsSync(main)) throw error;
      const out = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
      console.warn(`tsc -b services/projector failed; testing the existing dist:\n${out}`);
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface Service {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  readonly output: () => string;
  /** Resolves with the exit code (or the signal name) once the process is gone. */
  readonly exited: Promise<number | string>;
}

/** Starts `node services/projector/dist/main.js` on `port` over `dataDir`. */
export function startProjector(
  dataDir: string,
  port: number,
  env: Record<string, string> = {},
  args: readonly string[] = [],
): Service {
  const child = spawn(process.execPath, [join(DIST, 'main.js'), ...args], {
    cwd: REPO,
    env: {
      ...process.env,
      EGGMESH_DATA_DIR: dataDir,
      PROJECTOR_PORT: String(port),
      EGGMESH_HOST: '127.0.0.1',
      EGGMESH_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1));
  });
  return { child, port, url: `http://127.0.0.1:${port}`, output: () => output, exited };
}

/** Kills a process (SIGKILL by default) and waits until it is gone. */
export async function stop(service: Service | undefined, signal: NodeJS.Signals = 'SIGKILL') {
  if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill(signal);
  await service.exited;
}

/** GET a JSON or text endpoint; null when nothing answers. */
export async function get(url: string): Promise<{ status: number; text: string } | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return { status: res.status, text: await res.text() };
  } catch {
    return null;
  }
}

export interface Ready {
  status: string;
  position: number;
  head: number;
  lag: number;
}

/** Polls `/ready` until `done` holds (or throws with the process output after `timeoutMs`). */
export async function waitReady(
  service: Service,
  done: (ready: Ready) => boolean = (r) => r.lag === 0,
  timeoutMs = STARTUP_MS,
): Promise<Ready> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  while (Date.now() < deadline) {
    const res = await get(`${service.url}/ready`);
    if (res?.status === 200) {
      const ready = JSON.parse(res.text) as Ready;
      last = ready;
      if (done(ready)) return ready;
    }
    if (service.child.exitCode !== null) break;
    await sleep(25);
  }
  throw new Error(`projector not ready (last ${JSON.stringify(last)}):\n${service.output()}`);
}

/** Parses Prometheus text into name → value. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [name, value] = line.split(' ');
    out.set(name!, Number(value));
  }
  return out;
}

/** A small seeded PRNG (mulberry32) with the helpers the generators need. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

// ---------------------------------------------------------------------------------------------
// Random valid write sequences
// ---------------------------------------------------------------------------------------------

const QUALITIES = [undefined, 'grade_a', 'grade_b', 'cracked', 'double_yolk'] as const;
const STATUSES = [undefined, undefined, 'active', 'retired', 'deceased'] as const;

/** Small id pools so that collisions, moves, deletes and re-creates happen often. */
const POOLS: Record<string, number> = {
  farm: 3,
  coop: 4,
  hen: 6,
  container: 3,
  consumer: 2,
  lay_report: 10,
  storage_deposit: 6,
  storage_withdrawal: 5,
  container_transfer: 5,
  consumption_report: 5,
};
const WEIGHTS: [EntityName, number][] = [
  ['farm', 4],
  ['coop', 6],
  ['hen', 10],
  ['container', 5],
  ['consumer', 1],
  ['lay_report', 22],
  ['storage_deposit', 14],
  ['storage_withdrawal', 10],
  ['container_transfer', 10],
  ['consumption_report', 8],
];
const TOTAL_WEIGHT = WEIGHTS.reduce((s, [, w]) => s + w, 0);

/**
 * Generates commits of valid create/update/delete operations (the primary accepts each: no create of
 * a live id, no update or delete of a missing one) over small id pools; FKs point anywhere in the
 * pools, including ids never created or already deleted. Moves the clock between commits.
 */
export class WriteGenerator {
  private readonly live = new Set<string>();

  constructor(
    private readonly rng: Rng,
    private readonly clock: TestClock,
  ) {}

  private poolId(entity: string): string {
    return idFor(entity, this.rng.int(1, POOLS[entity]!));
  }

  private timestamp(): string {
    const rng = this.rng;
    let ms = this.clock.now + (rng.chance(0.5) ? rng.int(-DAY, DAY / 2) : rng.int(-35 * DAY, 2 * DAY));
    if (rng.chance(0.15)) ms = utcDayStart(ms) + (rng.chance(0.5) ? 0 : DAY - 1);
    if (rng.chance(0.2)) return new Date(ms + 330 * 60_000).toISOString().replace('Z', '+05:30');
    return iso(ms);
  }

  private payload(entity: EntityName): Payload {
    const rng = this.rng;
    switch (entity) {
      case 'farm':
        return farm(rng.pick(['megafarm', 'local_farm', 'homestead']));
      case 'coop':
        return coop(this.poolId('farm'), rng.int(1, 60));
      case 'hen':
        return hen(this.poolId('coop'), rng.pick(STATUSES));
      case 'container':
        return container(rng.int(1, 80));
      case 'consumer':
        return consumer();
      case 'lay_report':
        return lay(
          this.poolId('hen'),
          this.poolId('farm'),
          rng.int(0, 12),
          this.timestamp(),
          rng.pick(QUALITIES),
          this.poolId('coop'),
        );
      case 'storage_deposit':
        return deposit(this.poolId('container'), rng.int(1, 40), this.timestamp());
      case 'storage_withdrawal':
        return withdrawal(this.poolId('container'), rng.int(1, 30), this.timestamp());
      case 'container_transfer':
        return transfer(this.poolId('container'), this.poolId('container'), rng.int(1, 30), this.timestamp());
      case 'consumption_report':
        return consumption(
          this.poolId('container'),
          rng.int(1, 20),
          this.poolId('consumer'),
          this.timestamp(),
        );
      default:
        throw new Error(`no generator for ${entity}`);
    }
  }

  private pickEntity(): EntityName {
    let x = this.rng.next() * TOTAL_WEIGHT;
    for (const [entity, w] of WEIGHTS) {
      x -= w;
      if (x < 0) return entity;
    }
    return 'lay_report';
  }

  /** One operation; `live` tracks what the primary will hold once it commits. */
  operation(): WriteOperation {
    const entity = this.pickEntity();
    const id = this.poolId(entity);
    const key = `${entity}/${id}`;
    if (!this.live.has(key)) {
      this.live.add(key);
      return create(entity, id, this.payload(entity));
    }
    if (this.rng.chance(0.25)) {
      this.live.delete(key);
      return remove(entity, id);
    }
    return update(entity, id, this.payload(entity));
  }

  /** One commit of 1–3 operations; the clock moves first (often not at all, so times repeat). */
  commit(): WriteOperation[] {
    const rng = this.rng;
    const roll = rng.next();
    if (roll < 0.45) this.clock.advance(0);
    else if (roll < 0.75) this.clock.advance(rng.int(1, 60_000));
    else if (roll < 0.92) this.clock.advance(rng.int(60_000, 6 * 3_600_000));
    else this.clock.advance(rng.int(DAY, 2 * DAY));
    const n = rng.int(1, 3);
    return Array.from({ length: n }, () => this.operation());
  }
}
