import type { Dataset } from '../data/dataset.js';
import { compareCase } from '../lib/compare.js';
import { check, checkEqual, graphql } from '../lib/gate.js';
import { ratio } from '../lib/stats.js';
import { graphStep, Picker, urls } from './common.js';
import { byIdOrder } from './graphql-queries.js';
import { type QueryName, queries } from './queries.js';
import type { CaseResult, Scenario, ScenarioContext, Side } from './types.js';

type Doc = Record<string, unknown>;

export const depthCases: readonly { readonly name: string; readonly query: QueryName }[] = [
  { name: 'depth 1 (getById)', query: 'farmById' },
  { name: 'depth 2 (farm→coops)', query: 'farmDepth2' },
  { name: 'depth 3 (farm→coops→hens)', query: 'farmDepth3' },
  { name: 'depth 3 + farmOutput', query: 'farmDepth3Output' },
];

/** The farm → coops → hens tree of farm `f` as the depth-3 query selects it, lists ordered by id. */
export function expectedTree(dataset: Dataset, f: number): Doc {
  const farm = dataset.farm(f);
  return {
    id: farm.id,
    name: farm.payload.name,
    farm_type: farm.payload.farm_type,
    coops: dataset
      .coopsOfFarm(f)
      .map((c) => {
        const coop = dataset.coop(c);
        return {
          id: coop.id,
          name: coop.payload.name,
          capacity: coop.payload.capacity,
          hens: dataset
            .hensOfCoop(c)
            .map((h) => {
              const hen = dataset.hen(h);
              return {
                id: hen.id,
                name: hen.payload.name,
                breed: hen.payload.breed,
                status: hen.payload.status ?? null,
              };
            })
            .sort(byIdOrder),
        };
      })
      .sort(byIdOrder),
  };
}

/** A depth-3 answer with its lists ordered by id, to compare with `expectedTree`. */
export function normalise(tree: Doc): Doc {
  const coops = ((tree.coops as Doc[] | null) ?? [])
    .map((c) => ({ ...c, hens: [...((c.hens as Doc[] | null) ?? [])].sort(byIdOrder) }))
    .sort(byIdOrder);
  return { ...tree, coops };
}

async function gate(context: ScenarioContext, side: Side): Promise<void> {
  const { dataset } = context;
  const url = `${urls(context, side).graph}/farm/graph`;
  for (const f of [0, dataset.counts.farm - 1]) {
    const id = dataset.id('farm', f);
    const data = await graphql(url, queries.farmDepth3Output, { id });
    const got = data.getById as Doc | null;
    check(got, `${side}: farm ${f} missing`);
    const { farmOutput, ...tree } = got;
    checkEqual(normalise(tree), expectedTree(dataset, f), `${side} depth-3 tree of farm ${f}`);
    const outputs = farmOutput as Doc[] | null;
    check(
      Array.isArray(outputs) && outputs.length === 1,
      `${side}: farm ${f} farmOutput ${JSON.stringify(outputs)}`,
    );
    const output = outputs[0]!;
    const want = dataset.farmOutput(f);
    checkEqual(
      { farm_id: output.farm_id, total_hens: output.total_hens, active_hens: output.active_hens },
      { farm_id: want.farm_id, total_hens: want.total_hens, active_hens: want.active_hens },
      `${side} farmOutput of farm ${f}`,
    );
    for (const field of ['eggs_today', 'eggs_week'] as const) {
      const v = output[field];
      check(typeof v === 'number' && v >= 0, `${side} farmOutput.${field} = ${String(v)}`);
    }
  }
}

export const federationDepth: Scenario = {
  name: 'federation-depth',
  description:
    'Nesting cost on random farms: getById (depth 1), farm → coops (2), farm → coops → hens (3, 3 coops × 30 hens), ' +
    'and depth 3 plus farmOutput resolved in parallel.',
  services: { ours: ['read-api'], baseline: ['bare-graphql'] },
  async run(context) {
    for (const side of context.sides) await gate(context, side);
    const picker = new Picker(context.dataset, context.rng);
    const connections = context.plan.connections;
    const cases: CaseResult[] = [];
    for (const d of depthCases) {
      cases.push(
        await compareCase(context, {
          scenario: 'federation-depth',
          name: d.name,
          connections,
          load: (side) => ({
            label: `federation-depth ${side} ${d.name}`,
            baseUrl: urls(context, side).graph,
            connections,
            steps: [
              graphStep(
                'farm',
                d.query,
                () => ({ id: picker.id('farm') }),
                (v) => `"${v.id as string}"`,
              ),
            ],
          }),
          servers: (side) => (side === 'ours' ? ['read-api'] : ['bare-graphql']),
        }),
      );
    }
    const figures: Record<string, number> = {};
    const depth1 = cases[0]!;
    const depth3 = cases[2]!;
    for (const side of ['ours', 'baseline'] as const) {
      const r = ratio(depth3[side]?.p50, depth1[side]?.p50);
      if (r !== null) figures[`${side}_depth3_over_getById_p50`] = r;
    }
    return { name: 'federation-depth', description: this.description, cases, figures, notes: [] };
  },
};
