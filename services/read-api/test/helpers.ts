import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyFarm, emptyHen, emptyInventory } from '@eggmesh/projections';
import type { EntityName } from '@eggmesh/schema';
import { type Config, loggerOptions, parseConfig } from '@eggmesh/service-kit';
import type { WriteOperation } from '@eggmesh/store';
import {
  dataFiles,
  openPrimaryStore,
  openProjectionStore,
  openReadStore,
  type SqlitePrimaryStore,
  type SqliteProjectionStore,
  type SqliteReadStore,
} from '@eggmesh/store-sqlite';
import type { FastifyInstance } from 'fastify';
import { buildApp, type ReadStore } from '../src/index.js';

/** 2026-11-20T12:00:00Z: the fixture's "now". */
export const T0 = Date.UTC(2026, 10, 20, 12);
export const DAY = 86_400_000;

/** A valid v4-shaped UUID whose order follows `n` within a `kind`. */
export function uuid(kind: number, n: number): string {
  return `${kind.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

export interface Fixture {
  readonly dir: string;
  readonly primary: SqlitePrimaryStore;
  readonly projections: SqliteProjectionStore;
  readonly store: SqliteReadStore;
  readonly app: FastifyInstance;
  /** The wall clock of writes and of the app; `advance` moves it. */
  now: number;
  advance(ms: number): number;
  /** Writes entities and returns the log position of the last one. */
  write(operations: WriteOperation[]): Promise<number>;
  /** Writes projection documents (internal form) and moves the checkpoint to `checkpoint`. */
  project(documents: ProjectionWrite[], checkpoint?: number): Promise<void>;
  close(): Promise<void>;
}

export interface ProjectionWrite {
  readonly entity: Extract<EntityName, 'container_inventory' | 'hen_productivity' | 'farm_output'>;
  readonly id: string;
  readonly payload: Record<string, unknown>;
  readonly live?: boolean;
}

export interface FixtureOptions {
  readonly env?: Record<string, string>;
  /** GraphQL limits that are constants in the product, lowered to reach them with small data. */
  readonly graphql?: Partial<Config['graphql']>;
  /** Receives the app's log lines (JSON); without it the app logs to stdout. */
  readonly log?: (line: string) => void;
  /** Wraps the real store (e.g. to count calls); the app reads through what this returns. */
  readonly wrap?: (store: SqliteReadStore) => ReadStore;
}

/** A temp data dir with a primary and a projection store, and the app reading it read-only. */
export async function fixture(options: FixtureOptions = {}): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-read-api-'));
  const files = dataFiles(dir);
  const state = { now: T0 };
  const clock = () => state.now;
  const primary = openPrimaryStore({ file: files.primary, clock });
  const projections = openProjectionStore({ dir: files.projectionsDir });
  const store = openReadStore(dir);
  const parsed = parseConfig({ EGGMESH_DATA_DIR: dir, EGGMESH_LOG_LEVEL: 'silent', ...options.env });
  const config = { ...parsed, graphql: { ...parsed.graphql, ...options.graphql } };
  const app = buildApp({
    config,
    store: options.wrap ? options.wrap(store) : store,
    clock,
    ...(options.log
      ? { logger: { ...loggerOptions(config, 'read-api'), stream: { write: options.log } } }
      : {}),
  });
  await app.ready();
  const f: Fixture = {
    dir,
    primary,
    projections,
    store,
    app,
    get now() {
      return state.now;
    },
    set now(value: number) {
      state.now = value;
    },
    advance(ms) {
      state.now += ms;
      return state.now;
    },
    async write(operations) {
      const result = await primary.commit(operations);
      state.now += 1;
      return result.position;
    },
    async project(documents, checkpoint) {
      const current = projections.checkpointSync();
      await projections.commit({
        expectedCheckpoint: current,
        checkpoint: checkpoint ?? primary.headSync(),
        documents: documents.map((d) => ({
          entity: d.entity,
          id: d.id,
          createdAt: state.now,
          live: d.live ?? true,
          payload: d.payload,
        })),
        state: [],
      });
      state.now += 1;
    },
    async close() {
      await app.close();
      await store.close();
      await projections.close();
      await primary.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return f;
}

export interface GqlResponse {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary response JSON
  readonly body: any;
}

export async function gql(
  app: FastifyInstance,
  path: string,
  query: string,
  options: {
    variables?: Record<string, unknown>;
    operationName?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<GqlResponse> {
  const response = await app.inject({
    method: 'POST',
    url: path,
    headers: options.headers ?? {},
    payload: { query, variables: options.variables, operationName: options.operationName },
  });
  return { status: response.statusCode, headers: response.headers, body: response.json() };
}

/** Ids of the seeded world. */
export const ids = {
  farm: [uuid(1, 1), uuid(1, 2), uuid(1, 3)] as const,
  coop: [uuid(2, 1), uuid(2, 2), uuid(2, 3)] as const,
  hen: [uuid(3, 1), uuid(3, 2), uuid(3, 3), uuid(3, 4)] as const,
  layReport: [uuid(4, 1), uuid(4, 2), uuid(4, 3)] as const,
  container: [uuid(5, 1), uuid(5, 2)] as const,
  consumer: [uuid(6, 1), uuid(6, 2)] as const,
  deposit: uuid(7, 1),
  withdrawal: uuid(8, 1),
  transfer: uuid(9, 1),
  consumption: uuid(10, 1),
};

const create = (entity: EntityName, id: string, payload: Record<string, unknown>): WriteOperation => ({
  op: 'create',
  entity,
  id,
  payload,
});

/**
 * A small world: farms F0 (north) with coops C0, C1 and F1 (south) with C2, F2 (north) bare;
 * hens H0, H1 in C0, H2 in C1, H3 in C2; lay reports L0, L1 by H0 and L2 by H2; containers K0, K1;
 * consumers U0, U1; one deposit, withdrawal, transfer and consumption; projections for all.
 */
export async function seed(f: Fixture): Promise<number> {
  const [F0, F1, F2] = ids.farm;
  const [C0, C1, C2] = ids.coop;
  const [H0, H1, H2, H3] = ids.hen;
  const [K0, K1] = ids.container;
  const [U0, U1] = ids.consumer;
  const ts = new Date(T0).toISOString();
  await f.write([
    create('farm', F0, { name: 'Sunny Acres', farm_type: 'megafarm', zone: 'north', owner: 'Ada' }),
    create('farm', F1, { name: 'Dale End', farm_type: 'local_farm', zone: 'south' }),
    create('farm', F2, { name: 'Hilltop', farm_type: 'homestead', zone: 'north' }),
    create('coop', C0, { name: 'Coop A', farm_id: F0, capacity: 40, coop_type: 'barn' }),
    create('coop', C1, { name: 'Coop B', farm_id: F0, capacity: 20, coop_type: 'mobile' }),
    create('coop', C2, { name: 'Coop C', farm_id: F1, capacity: 10, coop_type: 'barn' }),
    create('hen', H0, {
      name: 'Henrietta',
      coop_id: C0,
      breed: 'leghorn',
      dob: '2025-03-01',
      status: 'active',
    }),
    create('hen', H1, { name: 'Clucky', coop_id: C0, breed: 'sussex' }),
    create('hen', H2, { name: 'Pecky', coop_id: C1, breed: 'orpington', status: 'retired' }),
    create('hen', H3, { name: 'Goldie', coop_id: C2, breed: 'plymouth_rock' }),
    create('lay_report', ids.layReport[0], {
      hen_id: H0,
      coop_id: C0,
      farm_id: F0,
      eggs: 2,
      timestamp: ts,
      quality: 'grade_a',
    }),
    create('lay_report', ids.layReport[1], { hen_id: H0, coop_id: C0, farm_id: F0, eggs: 1, timestamp: ts }),
    create('lay_report', ids.layReport[2], {
      hen_id: H2,
      coop_id: C1,
      farm_id: F0,
      eggs: 3,
      timestamp: ts,
      quality: 'cracked',
    }),
    create('container', K0, {
      name: 'Main Warehouse',
      container_type: 'warehouse',
      capacity: 1000,
      zone: 'north',
    }),
    create('container', K1, {
      name: 'Corner Shelf',
      container_type: 'market_shelf',
      capacity: 50,
      zone: 'south',
    }),
    create('consumer', U0, {
      name: 'The Bakery',
      consumer_type: 'bakery',
      zone: 'south',
      weekly_demand: 120,
    }),
    create('consumer', U1, { name: 'The Smiths', consumer_type: 'household', zone: 'north' }),
    create('storage_deposit', ids.deposit, {
      container_id: K0,
      source_type: 'farm',
      source_id: F0,
      eggs: 100,
      timestamp: ts,
    }),
    create('storage_withdrawal', ids.withdrawal, {
      container_id: K0,
      reason: 'breakage',
      eggs: 5,
      timestamp: ts,
    }),
    create('container_transfer', ids.transfer, {
      source_container_id: K0,
      dest_container_id: K1,
      eggs: 30,
      timestamp: ts,
      transport_method: 'van',
    }),
    create('consumption_report', ids.consumption, {
      consumer_id: U0,
      container_id: K1,
      eggs: 12,
      timestamp: ts,
      purpose: 'baking',
    }),
  ]);
  const day = String(Math.floor(T0 / DAY));
  await f.project([
    {
      entity: 'container_inventory',
      id: K0,
      payload: {
        ...emptyInventory(K0),
        capacity: 1000,
        current_eggs: 65,
        total_deposits: 100,
        total_withdrawals: 5,
        total_transfers_out: 30,
        utilization_pct: 6.5,
      },
    },
    {
      entity: 'container_inventory',
      id: K1,
      payload: {
        ...emptyInventory(K1),
        capacity: 50,
        current_eggs: 18,
        total_transfers_in: 30,
        total_consumed: 12,
        utilization_pct: 36,
      },
    },
    {
      entity: 'hen_productivity',
      id: H0,
      payload: { ...emptyHen(H0), farm_id: F0, total_eggs: 3, good_eggs: 3, days: { [day]: 3 } },
    },
    { entity: 'hen_productivity', id: H1, payload: { ...emptyHen(H1), farm_id: F0 } },
    {
      entity: 'hen_productivity',
      id: H2,
      payload: { ...emptyHen(H2), farm_id: F0, total_eggs: 3, good_eggs: 0, days: { [day]: 3 } },
    },
    { entity: 'hen_productivity', id: H3, payload: { ...emptyHen(H3), farm_id: F1 } },
    {
      entity: 'farm_output',
      id: F0,
      payload: { ...emptyFarm(F0), farm_type: 'megafarm', active_hens: 2, total_hens: 3, days: { [day]: 6 } },
    },
    {
      entity: 'farm_output',
      id: F1,
      payload: { ...emptyFarm(F1), farm_type: 'local_farm', active_hens: 1, total_hens: 1 },
    },
    { entity: 'farm_output', id: F2, payload: { ...emptyFarm(F2), farm_type: 'homestead' } },
  ]);
  return f.primary.headSync();
}
