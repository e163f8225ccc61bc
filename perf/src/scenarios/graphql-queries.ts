import type { Dataset, Row } from '../data/dataset.js';
import { zones } from '../data/dataset.js';
import { compareCase } from '../lib/compare.js';
import { check, checkEqual, graphql } from '../lib/gate.js';
import { graphStep, Picker, urls } from './common.js';
import { LIST_LIMIT, type QueryName, queries } from './queries.js';
import type { CaseResult, Scenario, ScenarioContext, Side } from './types.js';

type Doc = Record<string, unknown>;

const pickFields = (row: Row, fields: readonly string[]): Doc =>
  Object.fromEntries(fields.map((f) => [f, f === 'id' ? row.id : (row.payload[f] ?? null)]));

export const byIdOrder = (a: Doc, b: Doc): number => String(a.id).localeCompare(String(b.id));
const sortById = (list: unknown): Doc[] => [...((list as Doc[] | null) ?? [])].sort(byIdOrder);

function farmsInZone(dataset: Dataset, zone: string): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < dataset.counts.farm; i++) {
    const farm = dataset.farm(i);
    if (farm.payload.zone === zone) rows.push(farm);
  }
  return rows;
}

/** A query of the scenario: where it goes, what it asks, and what a right answer contains. */
interface QueryCase {
  readonly name: string;
  readonly entity: string;
  readonly query: QueryName;
  readonly variables: (picker: Picker) => Record<string, unknown>;
  /** A string every right answer to these variables contains (checked under load). */
  readonly mustContain: (variables: Record<string, unknown>) => string;
  /** Connections for this case (else the plan's). */
  readonly connections?: number;
  /** Full-answer checks on a few samples before any load. */
  readonly gate: (
    ask: (variables: Record<string, unknown>) => Promise<Doc>,
    dataset: Dataset,
  ) => Promise<void>;
}

export function queryCases(dataset: Dataset): QueryCase[] {
  const c = dataset.counts;
  const samples = (n: number) => [0, n - 1, Math.floor(n / 2)];
  const limitAll = c.farm > LIST_LIMIT;
  const firstFarmIds = Array.from({ length: c.farm }, (_, i) => dataset.id('farm', i)).sort();
  const consumerIds = Array.from({ length: c.consumer }, (_, i) => dataset.id('consumer', i)).sort();
  const lastConsumerId = consumerIds[consumerIds.length - 1];
  return [
    {
      name: 'farm getById',
      entity: 'farm',
      query: 'farmById',
      variables: (p) => ({ id: p.id('farm') }),
      mustContain: (v) => `"${v.id as string}"`,
      gate: async (ask) => {
        for (const i of samples(c.farm)) {
          const row = dataset.farm(i);
          checkEqual(
            (await ask({ id: row.id })).getById,
            pickFields(row, ['id', 'name', 'farm_type', 'zone']),
            `farm ${i}`,
          );
        }
        checkEqual((await ask({ id: '00000000-0000-4000-8000-000000000000' })).getById, null, 'unknown farm');
      },
    },
    {
      name: 'hen getById',
      entity: 'hen',
      query: 'henById',
      variables: (p) => ({ id: p.id('hen') }),
      mustContain: (v) => `"${v.id as string}"`,
      gate: async (ask) => {
        for (const i of samples(c.hen)) {
          const row = dataset.hen(i);
          checkEqual(
            (await ask({ id: row.id })).getById,
            pickFields(row, ['id', 'name', 'breed', 'status', 'coop_id']),
            `hen ${i}`,
          );
        }
      },
    },
    {
      name: 'container getById',
      entity: 'container',
      query: 'containerById',
      variables: (p) => ({ id: p.id('container') }),
      mustContain: (v) => `"${v.id as string}"`,
      gate: async (ask) => {
        for (const i of samples(c.container)) {
          const row = dataset.container(i);
          checkEqual(
            (await ask({ id: row.id })).getById,
            pickFields(row, ['id', 'name', 'container_type', 'capacity', 'zone']),
            `container ${i}`,
          );
        }
      },
    },
    {
      name: 'farm getAll',
      entity: 'farm',
      query: limitAll ? 'farmAllLimited' : 'farmAll',
      variables: () => (limitAll ? { limit: LIST_LIMIT } : {}),
      mustContain: () => `"${firstFarmIds[0]}"`,
      gate: async (ask) => {
        const got = sortById((await ask(limitAll ? { limit: LIST_LIMIT } : {})).getAll);
        const want = firstFarmIds.slice(0, limitAll ? LIST_LIMIT : c.farm);
        checkEqual(got.length, want.length, 'farm getAll length');
        checkEqual(
          got.map((d) => d.id),
          want,
          'farm getAll ids (the first by id)',
        );
        const farm0 = got.find((d) => d.id === dataset.id('farm', 0));
        if (farm0)
          checkEqual(
            farm0,
            pickFields(dataset.farm(0), ['id', 'name', 'farm_type', 'zone']),
            'farm 0 in getAll',
          );
      },
    },
    {
      // Every row in one answer, as MeshQL's getAll (the read-api's per-entity lists have no default cap):
      // the small preset's 5,000 consumers, whose rows have a farm's shape (name, type, zone).
      name: `consumer getAll (${c.consumer} rows)`,
      entity: 'consumer',
      query: 'consumerAll',
      variables: () => ({}),
      mustContain: () => `"${lastConsumerId}"`,
      // Half a megabyte per answer: a few clients, as MeshQL's k6 getAll test (1 virtual user) does.
      connections: 2,
      gate: async (ask) => {
        const got = sortById((await ask({})).getAll);
        checkEqual(got.length, c.consumer, 'consumer getAll length');
        checkEqual(
          got.map((d) => d.id),
          consumerIds,
          'consumer getAll ids',
        );
        checkEqual(
          got.find((d) => d.id === dataset.id('consumer', 0)),
          pickFields(dataset.consumer(0), ['id', 'name', 'consumer_type', 'zone']),
          'consumer 0 in getAll',
        );
      },
    },
    {
      name: 'farm getByZone',
      entity: 'farm',
      query: c.farm > LIST_LIMIT ? 'farmByZoneLimited' : 'farmByZone',
      // The zone of a random farm, so that the answer is never empty.
      variables: (p) => {
        const zone = dataset.farm(p.index('farm')).payload.zone;
        return c.farm > LIST_LIMIT ? { zone, limit: LIST_LIMIT } : { zone };
      },
      mustContain: (v) => `"zone":"${v.zone as string}"`,
      gate: async (ask) => {
        for (const zone of zones.slice(0, 2)) {
          const want = farmsInZone(dataset, zone)
            .map((r) => pickFields(r, ['id', 'name', 'farm_type', 'zone']))
            .sort(byIdOrder)
            .slice(0, LIST_LIMIT);
          const vars = c.farm > LIST_LIMIT ? { zone, limit: LIST_LIMIT } : { zone };
          checkEqual(sortById((await ask(vars)).getByZone), want, `farms in ${zone}`);
        }
      },
    },
    {
      name: 'coop getByFarm',
      entity: 'coop',
      query: 'coopsByFarm',
      variables: (p) => ({ id: p.id('farm') }),
      mustContain: (v) => `"farm_id":"${v.id as string}"`,
      gate: async (ask) => {
        for (const f of samples(c.farm)) {
          const want = dataset
            .coopsOfFarm(f)
            .map((i) => pickFields(dataset.coop(i), ['id', 'name', 'capacity', 'farm_id']))
            .sort(byIdOrder);
          checkEqual(
            sortById((await ask({ id: dataset.id('farm', f) })).getByFarm),
            want,
            `coops of farm ${f}`,
          );
        }
      },
    },
    {
      name: 'hen getByCoop',
      entity: 'hen',
      query: 'hensByCoop',
      variables: (p) => ({ id: p.id('coop') }),
      mustContain: (v) => `"coop_id":"${v.id as string}"`,
      gate: async (ask) => {
        for (const k of samples(c.coop)) {
          const want = dataset
            .hensOfCoop(k)
            .map((i) => pickFields(dataset.hen(i), ['id', 'name', 'breed', 'status', 'coop_id']))
            .sort(byIdOrder);
          checkEqual(
            sortById((await ask({ id: dataset.id('coop', k) })).getByCoop),
            want,
            `hens of coop ${k}`,
          );
        }
      },
    },
  ];
}

async function gate(context: ScenarioContext, side: Side, cases: readonly QueryCase[]): Promise<void> {
  const base = urls(context, side).graph;
  for (const q of cases) {
    const ask = (variables: Record<string, unknown>) =>
      graphql(`${base}/${q.entity}/graph`, queries[q.query], variables);
    try {
      await q.gate(ask, context.dataset);
    } catch (error) {
      check(false, `${side} ${q.name}: ${(error as Error).message}`);
    }
  }
}

export const graphqlQueries: Scenario = {
  name: 'graphql-queries',
  description:
    'Per-query load on the per-entity endpoints: getById (farm, hen, container), farm getAll, and the filters ' +
    'getByZone, coop getByFarm, hen getByCoop; ids drawn at random, sent as variables.',
  services: { ours: ['read-api'], baseline: ['bare-graphql'] },
  async run(context) {
    const cases = queryCases(context.dataset);
    for (const side of context.sides) await gate(context, side, cases);
    const picker = new Picker(context.dataset, context.rng);
    const results: CaseResult[] = [];
    for (const q of cases) {
      const connections = q.connections ?? context.plan.connections;
      results.push(
        await compareCase(context, {
          scenario: 'graphql-queries',
          name: q.name,
          connections,
          load: (side) => ({
            label: `graphql-queries ${side} ${q.name}`,
            baseUrl: urls(context, side).graph,
            connections,
            steps: [graphStep(q.entity, q.query, () => q.variables(picker), q.mustContain)],
          }),
          servers: (side) => (side === 'ours' ? ['read-api'] : ['bare-graphql']),
        }),
      );
    }
    return { name: 'graphql-queries', description: this.description, cases: results, figures: {}, notes: [] };
  },
};
