import type { IncomingHttpHeaders } from 'node:http';
import type { Dataset } from '../data/dataset.js';
import { breeds, zones } from '../data/dataset.js';
import type { Rng } from '../data/prng.js';
import type { Context, Step } from '../lib/load.js';
import { gqlBody, type QueryName } from './queries.js';
import type { ScenarioContext, Side } from './types.js';

/** Base URLs of the REST and GraphQL servers of a side. */
export function urls(context: ScenarioContext, side: Side): { rest: string; graph: string } {
  const s = context.stack;
  return side === 'ours'
    ? {
        rest: s.isRunning('write-api') ? s.url('write-api') : '',
        graph: s.isRunning('read-api') ? s.url('read-api') : '',
      }
    : {
        rest: s.isRunning('bare-rest') ? s.url('bare-rest') : '',
        graph: s.isRunning('bare-graphql') ? s.url('bare-graphql') : '',
      };
}

/** The JSON body of a response, or undefined. */
export function parse(body: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** A status check: `expected` exactly, or any 2xx. */
export function expectStatus(status: number, expected?: number): string | undefined {
  if (expected !== undefined) return status === expected ? undefined : `HTTP ${status}, expected ${expected}`;
  return status >= 200 && status < 300 ? undefined : `HTTP ${status}`;
}

/** A GraphQL answer under load: 200, `data`, no `errors`, and (cheaply) the text it must contain. */
export function graphqlCheck(status: number, body: string, mustContain?: string): string | undefined {
  if (status !== 200) return `HTTP ${status}: ${body.slice(0, 200)}`;
  if (!body.startsWith('{"data"') || body.includes('"errors"')) return `GraphQL error: ${body.slice(0, 200)}`;
  if (mustContain !== undefined && !body.includes(mustContain))
    return `answer lacks ${mustContain}: ${body.slice(0, 200)}`;
  return undefined;
}

/**
 * A GraphQL step: POST `/<entity>/graph` with a query whose variables `pick` draws per request;
 * the answer must contain `expect(variables)` (e.g. the id asked for).
 */
export function graphStep(
  entity: string,
  query: QueryName,
  pick: () => Record<string, unknown> | undefined,
  expect?: (variables: Record<string, unknown>) => string | undefined,
  headers?: (context: Context) => Record<string, string> | undefined,
): Step {
  return {
    method: 'POST',
    path: `/${entity}/graph`,
    body: gqlBody(query, pick()),
    setup: (request, context) => {
      const variables = pick();
      context.expect = variables && expect ? expect(variables) : undefined;
      const extra = headers?.(context);
      return {
        ...request,
        body: gqlBody(query, variables),
        ...(extra ? { headers: { ...request.headers, ...extra } } : {}),
      };
    },
    check: (status: number, body: string, context: Context, _headers: IncomingHttpHeaders) =>
      graphqlCheck(status, body, context.expect as string | undefined),
  };
}

/** Random picks from the dataset (uniform over its rows). */
export class Picker {
  constructor(
    readonly dataset: Dataset,
    readonly rng: Rng,
  ) {}

  index(entity: 'farm' | 'coop' | 'hen' | 'container' | 'consumer'): number {
    return this.rng.int(0, this.dataset.counts[entity] - 1);
  }

  id(entity: 'farm' | 'coop' | 'hen' | 'container' | 'consumer'): string {
    return this.dataset.id(entity, this.index(entity));
  }

  zone(): string {
    return this.rng.pick(zones);
  }
}

let serial = 0;
/** A unique name for rows created under load. */
export function benchName(kind: string): string {
  serial = (serial + 1) % 1_000_000_000;
  return `bench-${kind}-${process.pid}-${serial}`;
}

export const newFarm = (rng: Rng, name = benchName('farm')) => ({
  name,
  farm_type: rng.pick(['megafarm', 'local_farm', 'homestead'] as const),
  zone: rng.pick(zones),
});

export const newCoop = (rng: Rng, farmId: string) => ({
  name: benchName('coop'),
  farm_id: farmId,
  capacity: rng.int(10, 60),
  coop_type: 'type-1',
});

export const newHen = (rng: Rng, coopId: string) => ({
  name: benchName('hen'),
  coop_id: coopId,
  breed: rng.pick(breeds),
  status: 'active',
});

export const newContainer = (rng: Rng, capacity = rng.int(100, 500)) => ({
  name: benchName('container'),
  container_type: rng.pick(['warehouse', 'market_shelf', 'fridge'] as const),
  capacity,
  zone: rng.pick(zones),
});

export const newConsumer = (rng: Rng) => ({
  name: benchName('consumer'),
  consumer_type: rng.pick(['household', 'restaurant', 'bakery'] as const),
  zone: rng.pick(zones),
});
