import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EntityName, entities, entityNames } from '@eggmesh/schema';
import { parseConfig } from '@eggmesh/service-kit';
import { dataFiles, openPrimaryStore, ProjectionReader, SqliteReadStore } from '@eggmesh/store-sqlite';
import { buildApp } from '@eggmesh/write-api';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, expect } from 'vitest';

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix time in ms a UUID v7 carries in its first 48 bits. */
export const uuidTime = (id: string) => Number.parseInt(id.replace('-', '').slice(0, 12), 16);

export type Payload = Record<string, unknown>;

export const clientEntities = entityNames.filter((n) => entities[n].kind !== 'projection');
export const projectionNames = entityNames.filter((n) => entities[n].kind === 'projection');

/** Directories tempDir() made in this test file. */
const made: string[] = [];
// Registered while the importing test file is collected: runs after all of its tests and hooks.
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temp data directory, removed once the test file's tests are done. */
export function tempDir(prefix = 'eggmesh-write-api-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Where fakeClock() starts. */
export const FAKE_CLOCK_START = Date.parse('2026-03-01T12:00:00Z');

/** A fake wall clock: starts at a fixed instant and moves one millisecond per call. */
export function fakeClock(start = FAKE_CLOCK_START): () => number {
  let now = start;
  return () => now++;
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly dir: string;
  readonly files: ReturnType<typeof dataFiles>;
  readonly primary: ReturnType<typeof openPrimaryStore>;
  readonly reader: SqliteReadStore;
  /** The event log head, read straight from the SQLite file. */
  head(): Promise<number>;
  close(): Promise<void>;
}

/** The write service over real SQLite files in a fresh temp dir; `env` overrides configuration. */
export async function startApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dir = tempDir();
  const config = parseConfig({ EGGMESH_DATA_DIR: dir, ...env });
  const files = dataFiles(dir);
  const clock = fakeClock();
  const primary = openPrimaryStore({ file: files.primary, clock });
  const reader = new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir));
  const app = await buildApp({ config, primary, reader, clock });
  await app.ready();
  return {
    app,
    dir,
    files,
    primary,
    reader,
    head: () => primary.log.head(),
    async close() {
      await app.close();
      await reader.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Sends JSON; `body` strings are sent as they are. */
export function send(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS',
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  if (body === undefined) return app.inject({ method, url, headers });
  return app.inject({
    method,
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** POSTs one entity and returns the stored body (expects 201). */
export async function create(app: FastifyInstance, name: EntityName, payload: Payload): Promise<Payload> {
  const res = await send(app, 'POST', `/${name}/api`, payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Payload;
}

const ts = (n = 0) => new Date(Date.UTC(2026, 1, 20, 6, 30, n)).toISOString();

/**
 * Valid payloads for every client-written entity. FK targets are created through the API the first
 * time a payload needs them, so every FK points at a live row.
 */
export class Samples {
  private readonly targets = new Map<EntityName, string>();
  private counter = 0;
  private secondContainer: string | undefined;

  constructor(private readonly app: FastifyInstance) {}

  /** The id of a live `name` row, created on first use. */
  async target(name: EntityName): Promise<string> {
    const known = this.targets.get(name);
    if (known) return known;
    const row = await create(this.app, name, await this.payload(name));
    this.targets.set(name, row.id as string);
    return row.id as string;
  }

  /** A valid payload (without id) for a client-written entity; `variant` changes the values. */
  async payload(name: EntityName, variant = this.counter++): Promise<Payload> {
    const n = variant;
    switch (name) {
      case 'farm':
        return { name: `Farm ${n}`, farm_type: 'local_farm', zone: 'north', owner: `Owner ${n}` };
      case 'coop':
        return { name: `Coop ${n}`, farm_id: await this.target('farm'), capacity: 10 + n, coop_type: 'barn' };
      case 'hen':
        return {
          name: `Hen ${n}`,
          coop_id: await this.target('coop'),
          breed: 'leghorn',
          dob: `2025-04-0${(n % 9) + 1}`,
          status: 'active',
        };
      case 'container':
        return { name: `Shelf ${n}`, container_type: 'market_shelf', capacity: 100 + n, zone: 'south' };
      case 'consumer':
        return { name: `Bakery ${n}`, consumer_type: 'bakery', zone: 'east', weekly_demand: n };
      case 'lay_report': {
        const hen = await this.target('hen');
        return {
          hen_id: hen,
          coop_id: await this.target('coop'),
          farm_id: await this.target('farm'),
          eggs: n % 3,
          timestamp: ts(n % 60),
          quality: 'grade_a',
        };
      }
      case 'storage_deposit':
        return {
          container_id: await this.target('container'),
          source_type: 'farm',
          source_id: await this.target('farm'),
          eggs: 12 + n,
          timestamp: ts(n % 60),
        };
      case 'storage_withdrawal':
        return {
          container_id: await this.target('container'),
          reason: 'spoilage',
          eggs: 1 + n,
          timestamp: ts(n % 60),
        };
      case 'container_transfer': {
        const source = await this.target('container');
        this.secondContainer ??= (await create(this.app, 'container', await this.payload('container')))
          .id as string;
        const dest = this.secondContainer;
        return {
          source_container_id: source,
          dest_container_id: dest,
          eggs: 6 + n,
          timestamp: ts(n % 60),
          transport_method: 'van',
        };
      }
      case 'consumption_report':
        return {
          consumer_id: await this.target('consumer'),
          container_id: await this.target('container'),
          eggs: 2 + n,
          timestamp: '2026-02-20T07:00:00.000+01:00',
          purpose: 'baking',
        };
      default:
        throw new Error(`${name} is a projection: clients do not write it`);
    }
  }
}

/** Asserts the common error body shape and returns it. */
export function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as { error: unknown; code: unknown; issues?: { path: unknown[] }[] };
  expect(body.code).toBe(code);
  expect(typeof body.error).toBe('string');
  expect((body.error as string).length).toBeGreaterThan(0);
  return body;
}

export const newId = () => randomUUID();
