import { compareCase } from '../lib/compare.js';
import { checkEqual, http } from '../lib/gate.js';
import type { Context, Step } from '../lib/load.js';
import { expectStatus, newConsumer, newContainer, newCoop, newFarm, Picker, parse, urls } from './common.js';
import type { Scenario, ScenarioContext, Side } from './types.js';

type Actor = 'farm' | 'coop' | 'container' | 'consumer';

/** Seeded rows must read back exactly as generated. */
async function gate(context: ScenarioContext, side: Side): Promise<void> {
  const { dataset } = context;
  const base = urls(context, side).rest;
  const rows = [
    dataset.farm(0),
    dataset.coop(dataset.counts.coop - 1),
    dataset.container(1),
    dataset.consumer(2),
  ];
  for (const row of rows) {
    const answer = await http('GET', `${base}/${row.entity}/api/${row.id}`);
    checkEqual(answer.status, 200, `${side} GET seeded ${row.entity}`);
    checkEqual(answer.json, { ...row.payload, id: row.id }, `${side} seeded ${row.entity} ${row.id}`);
  }
}

/**
 * The MeshQL rest-crud mix, all over REST: create farm, coop, container, consumer; read one seeded
 * row of each; update the farm and container just created; create a consumer, delete it, create another.
 */
export function crudMixSteps(context: ScenarioContext): Step[] {
  const picker = new Picker(context.dataset, context.rng);
  const { rng } = context;
  const create = (entity: Actor, payload: (ctx: Context) => object | null, key?: string): Step => ({
    method: 'POST',
    path: `/${entity}/api`,
    setup: (request, ctx) => {
      const body = payload(ctx);
      return body ? { ...request, body: JSON.stringify(body) } : null;
    },
    check: (status, text, ctx) => {
      const bad = expectStatus(status, 201);
      if (bad) return bad;
      const doc = parse(text);
      if (typeof doc?.id !== 'string') return `no id in ${text}`;
      if (key) ctx[key] = doc.id;
      return undefined;
    },
  });
  const readSeeded = (entity: Actor): Step => ({
    method: 'GET',
    path: `/${entity}/api/${picker.id(entity)}`,
    setup: (request, ctx) => {
      ctx.readId = picker.id(entity);
      return { ...request, path: `/${entity}/api/${ctx.readId as string}` };
    },
    check: (status, text, ctx) =>
      expectStatus(status, 200) ?? (text.includes(ctx.readId as string) ? undefined : `wrong row ${text}`),
  });
  const update = (entity: Actor, key: string, payload: () => object): Step => ({
    method: 'PUT',
    path: `/${entity}/api`,
    setup: (request, ctx) =>
      typeof ctx[key] === 'string'
        ? { ...request, path: `/${entity}/api/${ctx[key] as string}`, body: JSON.stringify(payload()) }
        : null,
    check: (status) => expectStatus(status, 200),
  });
  return [
    create('farm', () => newFarm(rng), 'farmId'),
    // Under the farm just created: seeded farms keep exactly their generated coops (the GraphQL gates rely on it).
    create('coop', (ctx) => (typeof ctx.farmId === 'string' ? newCoop(rng, ctx.farmId) : null)),
    create('container', () => newContainer(rng), 'containerId'),
    create('consumer', () => newConsumer(rng)),
    readSeeded('farm'),
    readSeeded('coop'),
    readSeeded('container'),
    readSeeded('consumer'),
    update('farm', 'farmId', () => newFarm(rng)),
    update('container', 'containerId', () => newContainer(rng)),
    create('consumer', () => newConsumer(rng), 'tempId'),
    {
      method: 'DELETE',
      path: '/consumer/api',
      setup: (request, ctx) =>
        typeof ctx.tempId === 'string' ? { ...request, path: `/consumer/api/${ctx.tempId}` } : null,
      check: (status) => expectStatus(status, 200),
    },
    create('consumer', () => newConsumer(rng)),
  ];
}

export const restCrud: Scenario = {
  name: 'rest-crud',
  description:
    'The MeshQL rest-crud mix on actors: create farm, coop (under that farm), container, consumer; read a random seeded ' +
    'farm, coop, container, consumer; update the farm and container just created; create a consumer, delete it, create another ' +
    '(13 requests per loop).',
  services: { ours: ['write-api'], baseline: ['bare-rest'] },
  async run(context) {
    for (const side of context.sides) await gate(context, side);
    const connections = context.plan.connections;
    const result = await compareCase(context, {
      scenario: 'rest-crud',
      name: 'mix',
      connections,
      load: (side) => ({
        label: `rest-crud ${side}`,
        baseUrl: urls(context, side).rest,
        connections,
        steps: crudMixSteps(context),
      }),
      servers: (side) => (side === 'ours' ? ['write-api'] : ['bare-rest']),
    });
    return { name: 'rest-crud', description: this.description, cases: [result], figures: {}, notes: [] };
  },
};
