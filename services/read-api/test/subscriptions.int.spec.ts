import { randomUUID } from 'node:crypto';
import type { WriteOperation } from '@eggmesh/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hs256, nowS } from '../../write-api/test/jwt.js';
import { collect, type LiveStack, liveStack, type Tier, wsClient } from './live-harness.js';

const create = (entity: WriteOperation['entity'], payload: Record<string, unknown>, id = randomUUID()) =>
  ({ op: 'create', entity, id, payload }) as WriteOperation;

/** A farm with one coop and one hen in `zone`, its ids. */
async function farmWithHen(stack: LiveStack, zone: string) {
  const farm = randomUUID();
  const coop = randomUUID();
  const hen = randomUUID();
  await stack.write([
    create('farm', { name: `farm ${zone}`, farm_type: 'homestead', zone }, farm),
    create('coop', { name: 'c', farm_id: farm, capacity: 10, coop_type: 'barn' }, coop),
    create('hen', { name: 'h', coop_id: coop, breed: 'leghorn' }, hen),
  ]);
  return { farm, coop, hen };
}

const lay = (ids: { farm: string; coop: string; hen: string }, eggs: number) =>
  create('lay_report', {
    hen_id: ids.hen,
    coop_id: ids.coop,
    farm_id: ids.farm,
    eggs,
    timestamp: new Date().toISOString(),
  });

interface FarmOutputEvent {
  farmOutput: { position: number; deleted: boolean; farmOutput: { farm_id: string; total_hens: number } };
}
interface HenEvent {
  henProductivity: { position: number; henProductivity: { hen_id: string; total_eggs: number } };
}
interface ZoneEvent {
  projectionChanges: {
    position: number;
    entity: string;
    id: string;
    zone: string | null;
    henProductivity: { total_eggs: number } | null;
  };
}

const HEN = `subscription ($hen: ID!, $after: SafeInt) {
  henProductivity(hen_id: $hen, after: $after) { position henProductivity { hen_id total_eggs } }
}`;

function liveSuite(tier: Tier) {
  describe(`live projections over graphql-ws (${tier})`, () => {
    let stack: LiveStack;
    beforeAll(async () => {
      stack = await liveStack(tier);
    });
    afterAll(async () => {
      await stack?.close();
    });

    it("delivers a farm's current document, then each commit's new one, in commit order with its position", async () => {
      const ids = await farmWithHen(stack, 'north');
      const client = wsClient(stack.wsUrl);
      try {
        const got = collect<FarmOutputEvent>(
          client,
          'subscription ($id: ID!) { farmOutput(farm_id: $id) { position deleted farmOutput { farm_id total_hens } } }',
          { id: ids.farm.toUpperCase() },
        );
        const [first] = await got.until(1);
        expect(first?.farmOutput.farmOutput).toMatchObject({ farm_id: ids.farm, total_hens: 1 });
        const coop2 = randomUUID();
        const p1 = await stack.write([
          create('coop', { name: 'c2', farm_id: ids.farm, capacity: 5, coop_type: 'barn' }, coop2),
          create('hen', { name: 'h2', coop_id: coop2, breed: 'leghorn' }),
        ]);
        const p2 = await stack.write([create('hen', { name: 'h3', coop_id: coop2, breed: 'leghorn' })]);
        const values = await got.until(3);
        expect(values.map((v) => [v.farmOutput.position, v.farmOutput.farmOutput.total_hens])).toEqual([
          [first?.farmOutput.position, 1],
          [p1, 2],
          [p2, 3],
        ]);
        got.stop();
      } finally {
        await client.dispose();
      }
    });

    it('a subscriber that comes back with the last position it saw misses nothing', async () => {
      const ids = await farmWithHen(stack, 'south');
      const first = wsClient(stack.wsUrl);
      const got = collect<HenEvent>(first, HEN, { hen: ids.hen });
      await got.until(1);
      const p1 = await stack.write([lay(ids, 2)]);
      const seen = await got.until(2);
      expect(seen[1]?.henProductivity.position).toBe(p1);
      await first.dispose();
      // While it is away: two reports.
      const p2 = await stack.write([lay(ids, 3)]);
      const p3 = await stack.write([lay(ids, 4)]);
      const again = wsClient(stack.wsUrl);
      try {
        const resumed = collect<HenEvent>(again, HEN, { hen: ids.hen, after: p1 });
        const values = await resumed.until(2);
        const p4 = await stack.write([lay(ids, 1)]);
        await resumed.until(3);
        expect(
          resumed.values.map((v) => [
            v.henProductivity.position,
            v.henProductivity.henProductivity.total_eggs,
          ]),
        ).toEqual([
          [p2, 5],
          [p3, 9],
          [p4, 10],
        ]);
        expect(values.length).toBe(3);
      } finally {
        await again.dispose();
      }
    });

    it("the zone feed carries that zone's changes only, with their zone, in commit order", async () => {
      // The documented start: the projections position of /ready, then the queries, then `after` it.
      const ready = (await (await fetch(`${stack.httpUrl}/ready`)).json()) as { projections: number };
      const client = wsClient(stack.wsUrl);
      try {
        const east = collect<ZoneEvent>(
          client,
          `subscription ($after: SafeInt) { projectionChanges(zone: "east", after: $after) { position entity id zone henProductivity { total_eggs } } }`,
          { after: ready.projections },
        );
        const all = collect<ZoneEvent>(
          client,
          'subscription ($after: SafeInt) { projectionChanges(after: $after) { position entity id zone } }',
          { after: ready.projections },
        );
        const west = await farmWithHen(stack, 'west');
        const eastIds = await farmWithHen(stack, 'east');
        const p = await stack.write([lay(eastIds, 6)]);
        const report = await east.untilMatch(
          (v) => v.projectionChanges.position === p && v.projectionChanges.entity === 'hen_productivity',
        );
        expect(report.projectionChanges).toMatchObject({
          id: eastIds.hen,
          henProductivity: { total_eggs: 6 },
        });
        expect(east.values.every((v) => v.projectionChanges.zone === 'east')).toBe(true);
        expect(east.values.map((v) => v.projectionChanges.id)).toContain(eastIds.farm);
        await all.untilMatch((v) => v.projectionChanges.position === p);
        expect(all.values.map((v) => v.projectionChanges.id)).toEqual(
          expect.arrayContaining([west.farm, west.hen, eastIds.farm, eastIds.hen]),
        );
        const positions = all.values.map((v) => v.projectionChanges.position);
        expect(positions).toEqual([...positions].sort((a, b) => a - b));
        expect(positions[0]).toBeGreaterThan(ready.projections);
      } finally {
        await client.dispose();
      }
    });
  });
}

liveSuite('sqlite');
liveSuite('mongodb');

describe('live projections: limits and auth', () => {
  const SECRET = 'a-read-secret-of-at-least-32-characters';
  let stack: LiveStack;
  beforeAll(async () => {
    stack = await liveStack('sqlite', {
      env: { EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: SECRET, EGGMESH_AUTH_READS: 'true' },
      subscriptions: { perConnection: 2, perClient: 3 },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });
  const token = () => `Bearer ${hs256(SECRET, { scope: 'eggmesh:read', exp: nowS() + 600 })}`;

  it('refuses a connection without a token when reads need one, and serves one with a token', async () => {
    const ids = await farmWithHen(stack, 'north');
    const anonymous = wsClient(stack.wsUrl);
    try {
      const refused = collect<HenEvent>(anonymous, HEN, { hen: ids.hen });
      expect(await refused.failed()).toBeTruthy();
      expect(refused.values).toEqual([]);
    } finally {
      await anonymous.dispose();
    }
    const signed = wsClient(stack.wsUrl, { authorization: token() });
    try {
      const got = collect<HenEvent>(signed, HEN, { hen: ids.hen });
      expect((await got.until(1))[0]?.henProductivity.henProductivity.hen_id).toBe(ids.hen);
    } finally {
      await signed.dispose();
    }
  });

  it('bounds subscriptions per connection and per client with EGGMESH_TOO_MANY_SUBSCRIPTIONS', async () => {
    const ids = await farmWithHen(stack, 'north');
    const one = wsClient(stack.wsUrl, { authorization: token() });
    const two = wsClient(stack.wsUrl, { authorization: token() });
    try {
      const a = collect<HenEvent>(one, HEN, { hen: ids.hen });
      const b = collect<HenEvent>(one, HEN, { hen: ids.hen });
      await Promise.all([a.until(1), b.until(1)]);
      const c = collect<HenEvent>(one, HEN, { hen: ids.hen });
      expect(JSON.stringify(await c.failed())).toContain('EGGMESH_TOO_MANY_SUBSCRIPTIONS');
      // The client holds 2; a second connection may add one more, not two.
      const d = collect<HenEvent>(two, HEN, { hen: ids.hen });
      await d.until(1);
      const e = collect<HenEvent>(two, HEN, { hen: ids.hen });
      expect(JSON.stringify(await e.failed())).toContain('EGGMESH_TOO_MANY_SUBSCRIPTIONS');
      // Ending one frees its place.
      a.stop();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const f = collect<HenEvent>(two, HEN, { hen: ids.hen });
      await f.until(1);
    } finally {
      await one.dispose();
      await two.dispose();
    }
  });

  it('checks a subscription document like a query: an unknown field fails validation', async () => {
    const client = wsClient(stack.wsUrl, { authorization: token() });
    try {
      const bad = collect(client, 'subscription { farmOutput(farm_id: "x") { nope } }');
      expect(JSON.stringify(await bad.failed())).toContain('GRAPHQL_VALIDATION_FAILED');
    } finally {
      await client.dispose();
    }
  });
});
