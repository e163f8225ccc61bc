import { compareCase } from '../lib/compare.js';
import { check, checkEqual, http } from '../lib/gate.js';
import type { Step } from '../lib/load.js';
import { expectStatus, newFarm, parse, urls } from './common.js';
import type { CaseResult, Scenario, ScenarioContext, Side } from './types.js';

const entity = 'farm';
export const sequenceConcurrency = [1, 10, 100] as const;

/** One pass of the sequence through fetch, every answer checked in full. */
async function gate(context: ScenarioContext, side: Side): Promise<void> {
  const base = `${urls(context, side).rest}/${entity}/api`;
  const payload = newFarm(context.rng);
  const created = await http('POST', base, payload);
  checkEqual(created.status, 201, `${side} POST ${base}`);
  const body = created.json as Record<string, unknown>;
  check(typeof body?.id === 'string', `${side} POST: no id in ${created.text}`);
  checkEqual(body, { ...payload, id: body.id }, `${side} POST body`);
  if (side === 'ours') {
    check(Number(created.headers.get('x-log-position')) > 0, 'ours POST: no x-log-position header');
  }
  const url = `${base}/${body.id as string}`;
  const read = await http('GET', url);
  checkEqual(read.status, 200, `${side} GET`);
  checkEqual(read.json, { ...payload, id: body.id }, `${side} GET body`);
  const changed = { ...payload, name: `${payload.name}-v2` };
  const put = await http('PUT', url, changed);
  checkEqual(put.status, 200, `${side} PUT`);
  checkEqual(put.json, { ...changed, id: body.id }, `${side} PUT body`);
  const reread = await http('GET', url);
  checkEqual(reread.json, { ...changed, id: body.id }, `${side} GET after PUT`);
  const deleted = await http('DELETE', url);
  checkEqual(deleted.status, 200, `${side} DELETE`);
  checkEqual(deleted.json, { id: body.id, status: 'deleted' }, `${side} DELETE body`);
  checkEqual((await http('GET', url)).status, 404, `${side} GET after DELETE`);
}

/** POST → GET → PUT → GET → DELETE → GET(404), the id carried in the connection's context. */
export function sequenceSteps(context: ScenarioContext): Step[] {
  const { rng } = context;
  const base = `/${entity}/api`;
  const withId = (method: Step['method'], body?: (name: string) => string) => ({
    method,
    path: base,
    setup: (request: { method: Step['method']; path: string }, ctx: Record<string, unknown>) =>
      typeof ctx.id === 'string'
        ? { ...request, path: `${base}/${ctx.id}`, body: body?.(ctx.name as string) }
        : null,
  });
  const sameDoc = (suffix: string) => (status: number, text: string, ctx: Record<string, unknown>) => {
    const bad = expectStatus(status, 200);
    if (bad) return bad;
    const doc = parse(text);
    return doc?.id === ctx.id && doc?.name === `${ctx.name as string}${suffix}`
      ? undefined
      : `wrong body ${text}`;
  };
  return [
    {
      method: 'POST',
      path: base,
      body: JSON.stringify(newFarm(rng)),
      setup: (request, ctx) => {
        const payload = newFarm(rng);
        ctx.name = payload.name;
        ctx.id = undefined;
        return { ...request, body: JSON.stringify(payload) };
      },
      check: (status, text, ctx) => {
        const bad = expectStatus(status, 201);
        if (bad) return bad;
        const doc = parse(text);
        if (typeof doc?.id !== 'string' || doc.name !== ctx.name) return `wrong body ${text}`;
        ctx.id = doc.id;
        return undefined;
      },
    },
    { ...withId('GET'), check: sameDoc('') },
    {
      ...withId('PUT', (name) =>
        JSON.stringify({ name: `${name}-v2`, farm_type: 'homestead', zone: 'central' }),
      ),
      check: sameDoc('-v2'),
    },
    { ...withId('GET'), check: sameDoc('-v2') },
    {
      ...withId('DELETE'),
      check: (status, text, ctx) =>
        expectStatus(status, 200) ?? (parse(text)?.id === ctx.id ? undefined : `wrong body ${text}`),
    },
    { ...withId('GET'), check: (status) => expectStatus(status, 404) },
  ];
}

export const crudSequence: Scenario = {
  name: 'crud-sequence',
  description:
    'Per connection (virtual user) on farm: POST → GET → PUT → GET → DELETE → GET (expect 404), ' +
    'ids carried between steps; concurrency 1, 10 and 100.',
  services: { ours: ['write-api'], baseline: ['bare-rest'] },
  async run(context) {
    for (const side of context.sides) await gate(context, side);
    const cases: CaseResult[] = [];
    for (const connections of sequenceConcurrency) {
      cases.push(
        await compareCase(context, {
          scenario: 'crud-sequence',
          name: `c=${connections}`,
          connections,
          load: (side) => ({
            label: `crud-sequence ${side} c=${connections}`,
            baseUrl: urls(context, side).rest,
            connections,
            steps: sequenceSteps(context),
          }),
          servers: (side) => (side === 'ours' ? ['write-api'] : ['bare-rest']),
        }),
      );
    }
    return {
      name: 'crud-sequence',
      description: this.description,
      cases,
      figures: {},
      notes: ['The expected 404 of the last step counts as a right answer (autocannon lists it as non-2xx).'],
    };
  },
};
