import type { Dataset } from '../data/dataset.js';
import { ID_TYPE } from '../scenarios/queries.js';

/** A document as GraphQL sees it: payload fields plus `id`. */
export type Doc = { readonly id: string } & Record<string, unknown>;

export interface ListArgs {
  readonly limit?: number | null;
  readonly after?: string | null;
}

/** In-memory rows with an id map, an id-ordered list and hash indexes on the filtered fields. */
export class Table {
  readonly byId = new Map<string, Doc>();
  readonly #indexes = new Map<string, Map<unknown, Doc[]>>();
  #sorted: Doc[] | null = null;

  constructor(indexed: readonly string[]) {
    for (const field of indexed) this.#indexes.set(field, new Map());
  }

  add(doc: Doc): void {
    this.byId.set(doc.id, doc);
    for (const [field, index] of this.#indexes) {
      const key = doc[field];
      const list = index.get(key);
      if (list) list.push(doc);
      else index.set(key, [doc]);
    }
    this.#sorted = null;
  }

  /** Rows whose `field` equals `value`, ordered by id. */
  find(field: string, value: unknown, args: ListArgs = {}): Doc[] {
    const index = this.#indexes.get(field);
    if (!index) throw new Error(`no index on ${field}`);
    return page(index.get(value) ?? [], args);
  }

  all(args: ListArgs = {}): Doc[] {
    this.#sorted ??= [...this.byId.values()].sort(byId);
    return page(this.#sorted, args);
  }

  /** Call once loading is done: sorts index lists by id. */
  seal(): void {
    for (const index of this.#indexes.values()) for (const list of index.values()) list.sort(byId);
    this.all();
  }
}

const byId = (a: Doc, b: Doc): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Keyset paging over an id-ordered list. */
export function page(sorted: readonly Doc[], { limit, after }: ListArgs): Doc[] {
  let start = 0;
  if (after) {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]!.id <= after) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  const end = limit != null && limit >= 0 ? Math.min(sorted.length, start + limit) : sorted.length;
  return start === 0 && end === sorted.length ? (sorted as Doc[]) : sorted.slice(start, end);
}

export interface Model {
  readonly farm: Table;
  readonly coop: Table;
  readonly hen: Table;
  readonly container: Table;
  readonly farm_output: Table;
  readonly container_inventory: Table;
  readonly consumer: Table;
}

/** Loads farms, coops, hens, containers, consumers and the projection documents into memory. */
export function buildModel(dataset: Dataset | null): Model {
  const model: Model = {
    farm: new Table(['zone']),
    coop: new Table(['farm_id']),
    hen: new Table(['coop_id']),
    container: new Table(['zone']),
    farm_output: new Table(['farm_id']),
    container_inventory: new Table(['container_id']),
    consumer: new Table(['zone']),
  };
  if (!dataset) return model;
  const c = dataset.counts;
  const doc = (row: { id: string; payload: Record<string, unknown> }): Doc => ({
    ...row.payload,
    id: row.id,
  });
  for (let i = 0; i < c.farm; i++) model.farm.add(doc(dataset.farm(i)));
  for (let i = 0; i < c.coop; i++) model.coop.add(doc(dataset.coop(i)));
  const totals = new Map<string, { total: number; active: number }>();
  for (let i = 0; i < c.hen; i++) {
    const hen = doc(dataset.hen(i));
    model.hen.add(hen);
    const farmId = dataset.id('farm', dataset.farmOfCoop(dataset.coopOfHen(i)));
    const t = totals.get(farmId) ?? { total: 0, active: 0 };
    t.total++;
    if (hen.status === undefined || hen.status === 'active') t.active++;
    totals.set(farmId, t);
  }
  for (let i = 0; i < c.container; i++) {
    const container = doc(dataset.container(i));
    model.container.add(container);
    model.container_inventory.add({
      id: container.id,
      container_id: container.id,
      current_eggs: 0,
      total_deposits: 0,
      total_withdrawals: 0,
      total_transfers_in: 0,
      total_transfers_out: 0,
      total_consumed: 0,
      utilization_pct: 0,
    });
  }
  for (let i = 0; i < c.consumer; i++) model.consumer.add(doc(dataset.consumer(i)));
  for (const farm of model.farm.byId.values()) {
    const t = totals.get(farm.id) ?? { total: 0, active: 0 };
    model.farm_output.add({
      id: farm.id,
      farm_id: farm.id,
      farm_type: farm.farm_type,
      eggs_today: 0,
      eggs_week: 0,
      eggs_month: 0,
      active_hens: t.active,
      total_hens: t.total,
      avg_per_hen_per_week: 0,
    });
  }
  for (const table of Object.values(model)) table.seal();
  return model;
}

const list = `(at: Float, limit: Int, after: ${ID_TYPE})`;
const byKey = (name: string, arg: string, type: string): string =>
  `${name}(${arg}: ${type}, at: Float, limit: Int, after: ${ID_TYPE})`;

export const typeDefs = `
type Farm { id: ID! name: String farm_type: String zone: String owner: String coops: [Coop] farmOutput: [FarmOutput] }
type Coop { id: ID! name: String farm_id: ID capacity: Int coop_type: String farm: Farm hens: [Hen] }
type Hen { id: ID! name: String coop_id: ID breed: String dob: String status: String coop: Coop productivity: [HenProductivity] }
type Container { id: ID! name: String container_type: String capacity: Int zone: String inventory: [ContainerInventory] }
type FarmOutput { id: ID farm_id: ID farm_type: String eggs_today: Int eggs_week: Int eggs_month: Int active_hens: Int total_hens: Int avg_per_hen_per_week: Float farm: Farm }
type ContainerInventory { id: ID container_id: ID current_eggs: Int total_deposits: Int total_withdrawals: Int total_transfers_in: Int total_transfers_out: Int total_consumed: Int utilization_pct: Float container: Container }
type Consumer { id: ID! name: String consumer_type: String zone: String }
type HenProductivity { id: ID hen_id: ID farm_id: ID eggs_today: Int eggs_week: Int eggs_month: Int total_eggs: Int avg_per_week: Float quality_rate: Float hen: Hen }
`;

/** Per-entity endpoints the baseline serves: entity → [GraphQL type, filter query, filter argument, filtered field]. */
export const endpoints = {
  farm: ['Farm', 'getByZone', 'zone', 'zone'],
  coop: ['Coop', 'getByFarm', 'id', 'farm_id'],
  hen: ['Hen', 'getByCoop', 'id', 'coop_id'],
  container: ['Container', 'getByZone', 'zone', 'zone'],
  farm_output: ['FarmOutput', 'getByFarm', 'id', 'farm_id'],
  container_inventory: ['ContainerInventory', 'getByContainer', 'id', 'container_id'],
  consumer: ['Consumer', 'getByZone', 'zone', 'zone'],
} as const satisfies Record<keyof Model, readonly [string, string, string, string]>;

export type EndpointName = keyof typeof endpoints;

/** SDL of one per-entity endpoint. */
export function endpointSchema(entity: EndpointName): string {
  const [type, filter, arg] = endpoints[entity];
  const argType = arg === 'zone' ? 'String' : ID_TYPE;
  return `${typeDefs}
type Query {
  getById(id: ${ID_TYPE}, at: Float): ${type}
  getAll${list}: [${type}]
  ${byKey(filter, arg, argType)}: [${type}]
}`;
}

/** SDL of the unified endpoint: `<entity>` (by id), `<entity>s` (all) and `<entity>_<filter>` root fields. */
export function unifiedSchema(): string {
  const fields = (Object.keys(endpoints) as EndpointName[]).map((entity) => {
    const [type, filter, arg] = endpoints[entity];
    const argType = arg === 'zone' ? 'String' : ID_TYPE;
    return `  ${entity}(id: ${ID_TYPE}, at: Float): ${type}
  ${entity}_getAll${list}: [${type}]
  ${byKey(`${entity}_${filter}`, arg, argType)}: [${type}]`;
  });
  return `${typeDefs}\ntype Query {\n${fields.join('\n')}\n}`;
}

type Args = { id?: string; zone?: string } & ListArgs;
type Resolver = (parent: unknown, args: Args) => unknown;

/** Root resolvers of one endpoint, keyed by field name (with an optional prefix for the unified schema). */
export function queryResolvers(
  model: Model,
  entity: EndpointName,
  unified = false,
): Record<string, Resolver> {
  const [, filter, arg, field] = endpoints[entity];
  const table = model[entity];
  const name = (query: string): string =>
    unified ? (query === 'getById' ? entity : `${entity}_${query}`) : query;
  return {
    [name('getById')]: (_p, args) => (args.id ? (table.byId.get(args.id) ?? null) : null),
    [name('getAll')]: (_p, args) => table.all(args),
    [name(filter)]: (_p, args) => table.find(field, args[arg as 'id' | 'zone'], args),
  };
}

/** Relation resolvers (domain.md §3) over the model: straight map lookups, no batching needed in memory. */
export function typeResolvers(model: Model): Record<string, Record<string, (parent: Doc) => unknown>> {
  const one = (table: Table, key: string) => (parent: Doc) => table.byId.get(parent[key] as string) ?? null;
  const many = (table: Table, field: string) => (parent: Doc) => table.find(field, parent.id);
  return {
    Farm: { coops: many(model.coop, 'farm_id'), farmOutput: many(model.farm_output, 'farm_id') },
    Coop: { farm: one(model.farm, 'farm_id'), hens: many(model.hen, 'coop_id') },
    Hen: {
      coop: one(model.coop, 'coop_id'),
      // Not materialised (900k documents at national size): made on demand with zero counts.
      productivity: (hen: Doc) => [
        {
          id: hen.id,
          hen_id: hen.id,
          eggs_today: 0,
          eggs_week: 0,
          eggs_month: 0,
          total_eggs: 0,
          avg_per_week: 0,
          quality_rate: 0,
        },
      ],
    },
    Container: { inventory: many(model.container_inventory, 'container_id') },
    FarmOutput: { farm: one(model.farm, 'farm_id') },
    ContainerInventory: { container: one(model.container, 'container_id') },
    HenProductivity: { hen: one(model.hen, 'hen_id') },
  };
}
