import { setTimeout as sleep } from 'node:timers/promises';
import { mulberry32, permutation } from '../data/prng.js';
import { check, GateError } from '../lib/gate.js';
import { Client } from '../lib/http-client.js';
import { assertClean, type LoadSpec, measure, runLoad } from '../lib/load.js';
import { haproxyAvailable } from '../lib/stack.js';
import { type Interval, median, percentileOfSorted, percentileRatioInterval } from '../lib/stats.js';
import { expectStatus, graphqlCheck, graphStep, newFarm, Picker, parse } from './common.js';
import { gqlBody, LIST_LIMIT, type QueryName } from './queries.js';
import type { Scenario, ScenarioContext } from './types.js';

/**
 * The latency a MeshQL client sees at a low rate: closed loop with think time (k6's `sleep(0.5)`),
 * MeshQL-shaped requests, sent through the public port (`front-door`: the read-api, which answers
 * reads itself and forwards writes to the write-api), through HAProxy with the generated
 * configuration, straight to each service, and to the bare baselines, in turns. What it answers: what
 * each front door costs (front ÷ direct p95: for REST the forwarding hop, for GraphQL nothing through
 * the public port, which is the read-api) and what our services cost against the bare ones (direct ÷
 * baseline p95). There is no target for the hop: it is reported.
 */

/** `haproxy`: HAProxy (generated configuration) in front of the services, measured where it is installed. */
export type LatencyTarget = 'front-door' | 'haproxy' | 'direct' | 'baseline';
export const latencyTargets: readonly LatencyTarget[] = ['front-door', 'haproxy', 'direct', 'baseline'];
/** The front doors measured against the direct services. */
export type FrontDoor = 'front-door' | 'haproxy';
export const latencyClients = [1, 10] as const;
/** Users of the warm-up without think time that precedes the timed runs. */
const WARM_USERS = 10;

export type RequestApi = 'graphql' | 'rest';

export interface LatencyCell {
  readonly target: LatencyTarget;
  readonly clients: number;
  /** A request kind, or `graphql (all)` / `rest (all)`. */
  readonly kind: string;
  readonly count: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
}

export interface LatencyCpu {
  readonly target: LatencyTarget;
  readonly clients: number;
  readonly requests: number;
  /** CPU ms per request of the front process alone; null when the target has none. */
  readonly frontCpuMsPerRequest: number | null;
  /** CPU ms per request of every server process of the side (ours: write-api + read-api, + HAProxy). */
  readonly totalCpuMsPerRequest: number;
}

/** The same requests without think time (autocannon, 10 connections): CPU per request when busy. */
export interface LoadedCpu {
  readonly target: FrontDoor | 'direct';
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** CPU ms per request of write-api + read-api (+ HAProxy, when it runs). */
  readonly cpuMsPerRequest: number;
}

export interface LatencyResult {
  readonly thinkMs: number;
  readonly secondsPerRun: number;
  readonly runs: number;
  readonly cells: readonly LatencyCell[];
  readonly cpu: readonly LatencyCpu[];
  readonly loaded: readonly LoadedCpu[];
  /** The REST get alone, loaded (which the mixed figure dilutes). */
  readonly loadedRest?: readonly LoadedCpu[];
  /** The GraphQL getById alone, loaded. */
  readonly loadedGraphql?: readonly LoadedCpu[];
  /** How far each front door's p95 ratio moves with its samples (absent in older reports). */
  readonly intervals?: readonly RatioInterval[];
}

/** The 90 % bootstrap interval of a front door's p95 ÷ the direct service's, pooled per API. */
export interface RatioInterval extends Interval {
  readonly door: FrontDoor;
  readonly clients: number;
  readonly api: RequestApi;
}

/**
 * What the front door costs in CPU, as a share of what the services cost when called directly:
 * (all our processes' CPU per request through the front door − the same, direct) ÷ the direct figure.
 * It counts an embedded read side and a proxy alike.
 */
export function frontCpuShare(through: number, direct: number): number | null {
  return Number.isFinite(through) && Number.isFinite(direct) && direct > 0
    ? (through - direct) / direct
    : null;
}

/** What a front door adds in CPU for one loaded measurement (front door and direct), or null. */
export function loadedShare(
  loaded: readonly LoadedCpu[] | undefined,
  door: FrontDoor = 'front-door',
): number | null {
  const front = loaded?.find((l) => l.target === door);
  const direct = loaded?.find((l) => l.target === 'direct');
  return front && direct ? frontCpuShare(front.cpuMsPerRequest, direct.cpuMsPerRequest) : null;
}

interface Kind {
  readonly name: string;
  readonly api: RequestApi;
}

export const latencyKinds: readonly Kind[] = [
  { name: 'graphql getById', api: 'graphql' },
  { name: 'graphql getAll', api: 'graphql' },
  { name: 'graphql filtered', api: 'graphql' },
  { name: 'graphql depth 2', api: 'graphql' },
  { name: 'graphql depth 3', api: 'graphql' },
  { name: 'rest create', api: 'rest' },
  { name: 'rest get', api: 'rest' },
  { name: 'rest update', api: 'rest' },
];

interface Bases {
  readonly rest: string;
  readonly graph: string;
}

function basesOf(context: ScenarioContext, target: LatencyTarget): Bases {
  const s = context.stack;
  // The public port is the read-api: GraphQL through it is the direct path; REST writes take the hop.
  if (target === 'front-door') return { rest: s.url('read-api'), graph: s.url('read-api') };
  if (target === 'haproxy') return { rest: s.url('haproxy'), graph: s.url('haproxy') };
  if (target === 'direct') return { rest: s.url('write-api'), graph: s.url('read-api') };
  return { rest: s.url('bare-rest'), graph: s.url('bare-graphql') };
}

/** Samples (ms) per request kind of one target and client count, over all runs. */
type Samples = Map<string, number[]>;

/** One target of a virtual user: where it sends, and the farm its REST requests made last. */
interface TargetState {
  readonly target: LatencyTarget;
  readonly bases: Bases;
  farm?: { readonly url: string; readonly payload: Record<string, unknown> };
}

/**
 * One virtual user's loop, until `until`: every kind in turn, and each kind sent to every target one
 * after the other (think time after each answer), the targets in a random order each time (a user's
 * own sequence). So the samples of the targets are taken seconds apart, not an iteration apart, and a
 * slow phase of the shared machine slows them alike; and no target always follows the same other one,
 * which placed its users at the same end of every burst.
 */
async function userLoop(
  context: ScenarioContext,
  targets: readonly { readonly target: LatencyTarget; readonly bases: Bases }[],
  user: number,
  thinkMs: number,
  until: number,
  samplesOf: ReadonlyMap<LatencyTarget, Samples> | null,
  picker: Picker,
): Promise<number> {
  const client = new Client();
  const { dataset, rng } = context;
  const manyFarms = dataset.counts.farm > LIST_LIMIT;
  const states: TargetState[] = targets.map((t) => ({ target: t.target, bases: t.bases }));
  let sent = 0;
  const record = (state: TargetState, kind: string, ms: number) => {
    sent++;
    samplesOf?.get(state.target)?.get(kind)?.push(ms);
  };
  const graph = async (
    state: TargetState,
    kind: string,
    query: QueryName,
    variables: Record<string, unknown>,
    mustContain: string,
  ) => {
    const base = state.bases.graph;
    const a = await client.send(`${base}/farm/graph`, 'POST', gqlBody(query, variables));
    const bad = graphqlCheck(a.status, a.body, mustContain);
    if (bad) throw new GateError(`latency ${kind} at ${base}: ${bad}`);
    record(state, kind, a.ms);
  };
  const think = () => (thinkMs > 0 ? sleep(thinkMs) : Promise.resolve());
  const order = mulberry32(0x5eed + user);
  /** `send` once per target, in a random order, with think time after each. */
  const everyTarget = async (send: (state: TargetState) => Promise<void>) => {
    for (const at of permutation(order, states.length)) {
      await send(states[at]!);
      await think();
    }
  };
  try {
    while (performance.now() < until) {
      const farmIndex = picker.index('farm');
      const farmId = dataset.id('farm', farmIndex);
      const zone = dataset.farm(farmIndex).payload.zone as string;
      await everyTarget((t) => graph(t, 'graphql getById', 'farmById', { id: farmId }, `"${farmId}"`));
      await everyTarget((t) =>
        graph(
          t,
          'graphql getAll',
          manyFarms ? 'farmAllLimited' : 'farmAll',
          manyFarms ? { limit: LIST_LIMIT } : {},
          '"farm_type"',
        ),
      );
      await everyTarget((t) =>
        graph(
          t,
          'graphql filtered',
          manyFarms ? 'farmByZoneLimited' : 'farmByZone',
          manyFarms ? { zone, limit: LIST_LIMIT } : { zone },
          `"zone":"${zone}"`,
        ),
      );
      await everyTarget((t) => graph(t, 'graphql depth 2', 'farmDepth2', { id: farmId }, '"coops":[{'));
      await everyTarget((t) => graph(t, 'graphql depth 3', 'farmDepth3', { id: farmId }, '"hens":[{'));
      await everyTarget(async (t) => {
        const payload = newFarm(rng);
        const created = await client.send(`${t.bases.rest}/farm/api`, 'POST', JSON.stringify(payload));
        const doc = parse(created.body);
        if (created.status !== 201 || typeof doc?.id !== 'string' || doc.name !== payload.name)
          throw new GateError(
            `latency rest create at ${t.bases.rest}: HTTP ${created.status} ${created.body.slice(0, 200)}`,
          );
        record(t, 'rest create', created.ms);
        t.farm = { url: `${t.bases.rest}/farm/api/${doc.id}`, payload };
      });
      await everyTarget(async (t) => {
        const { url, payload } = t.farm!;
        const read = await client.send(url, 'GET');
        if (read.status !== 200 || parse(read.body)?.name !== payload.name)
          throw new GateError(`latency rest get ${url}: HTTP ${read.status} ${read.body.slice(0, 200)}`);
        record(t, 'rest get', read.ms);
      });
      await everyTarget(async (t) => {
        const { url, payload } = t.farm!;
        const name = `${payload.name as string}-v2`;
        const put = await client.send(url, 'PUT', JSON.stringify({ ...payload, name }));
        if (put.status !== 200 || parse(put.body)?.name !== name)
          throw new GateError(`latency rest update ${url}: HTTP ${put.status} ${put.body.slice(0, 200)}`);
        record(t, 'rest update', put.ms);
        // Not timed: keeps the farm table (and so every getAll) the size the baselines answer.
        const gone = await client.send(url, 'DELETE');
        if (gone.status !== 200) throw new GateError(`latency rest delete ${url}: HTTP ${gone.status}`);
        t.farm = undefined;
      });
    }
  } finally {
    client.close();
  }
  return sent;
}

const summarize = (
  target: LatencyTarget,
  clients: number,
  kind: string,
  values: readonly number[],
): LatencyCell => {
  const sorted = Float64Array.from(values).sort();
  return {
    target,
    clients,
    kind,
    count: sorted.length,
    p50: percentileOfSorted(sorted, 50),
    p95: percentileOfSorted(sorted, 95),
    p99: percentileOfSorted(sorted, 99),
  };
};

/** The cell of a report for (target, clients, kind). */
export const cellOf = (
  result: LatencyResult,
  target: LatencyTarget,
  clients: number,
  kind: string,
): LatencyCell | undefined =>
  result.cells.find((c) => c.target === target && c.clients === clients && c.kind === kind);

/** GraphQL getById and REST get of seeded farms, no think time, through the front door and direct, in turns. */
async function measureLoaded(
  context: ScenarioContext,
  picker: Picker,
  only?: RequestApi,
): Promise<LoadedCpu[]> {
  const { plan, stack } = context;
  const withHaproxy = stack.isRunning('haproxy');
  const pids = stack.cpuPids(['write-api', 'read-api', ...(withHaproxy ? (['haproxy'] as const) : [])]);
  const specs = (target: FrontDoor | 'direct'): LoadSpec[] => {
    const bases = basesOf(context, target);
    const farmPath = () => `/farm/api/${picker.id('farm')}`;
    const all: LoadSpec[] = [
      {
        label: `latency loaded ${target} graphql`,
        baseUrl: bases.graph,
        connections: 5,
        steps: [
          graphStep(
            'farm',
            'farmById',
            () => ({ id: picker.id('farm') }),
            (v) => `"${v.id as string}"`,
          ),
        ],
      },
      {
        label: `latency loaded ${target} rest`,
        baseUrl: bases.rest,
        connections: 5,
        steps: [
          {
            method: 'GET',
            path: farmPath(),
            setup: (request) => ({ ...request, path: farmPath() }),
            check: (status) => expectStatus(status, 200),
          },
        ],
      },
    ];
    return only ? all.filter((spec) => spec.label.endsWith(` ${only}`)) : all;
  };
  const targets: readonly (FrontDoor | 'direct')[] = withHaproxy
    ? ['front-door', 'haproxy', 'direct']
    : ['front-door', 'direct'];
  for (const t of targets) {
    if (plan.warmupSec > 0)
      for (const l of await Promise.all(specs(t).map((x) => runLoad(x, plan.warmupSec)))) assertClean(l);
  }
  const runs = new Map<FrontDoor | 'direct', { rps: number; p50: number; p99: number; cpu: number }[]>(
    targets.map((t) => [t, []]),
  );
  for (let i = 0; i < plan.runs; i++) {
    for (const t of i % 2 === 0 ? targets : [...targets].reverse()) {
      const run = await measure(specs(t), plan.durationSec, pids);
      for (const l of run.loads) assertClean(l);
      const all = run.loads;
      runs.get(t)!.push({
        rps: all.reduce((a, l) => a + l.rps, 0),
        p50: Math.max(...all.map((l) => l.latency.p50)),
        p99: Math.max(...all.map((l) => l.latency.p99)),
        cpu: run.cpuMsPerRequest,
      });
    }
  }
  return targets.map((t) => {
    const r = runs.get(t)!;
    const out: LoadedCpu = {
      target: t,
      rps: median(r.map((x) => x.rps)),
      p50: median(r.map((x) => x.p50)),
      p99: median(r.map((x) => x.p99)),
      cpuMsPerRequest: median(r.map((x) => x.cpu)),
    };
    context.log(
      `  latency/loaded${only ? ` ${only} only` : ''} ${t}: ${out.rps.toFixed(0)} req/s p50 ${out.p50.toFixed(2)} p99 ${out.p99.toFixed(2)} ms, ${out.cpuMsPerRequest.toFixed(3)} cpu-ms/req (write+read${withHaproxy ? '+haproxy' : ''})`,
    );
    return out;
  });
}

export const latency: Scenario = {
  name: 'latency',
  description:
    'Closed loop with think time (k6 sleep) at 1 and 10 virtual users, each on one keep-alive connection: ' +
    'GraphQL getById, getAll, filtered (getByZone), depth 2 and depth 3 on /farm/graph, REST create, get, update ' +
    'on /farm/api; sent through the public port (the read-api, forwarding writes), through HAProxy (generated ' +
    'configuration) where installed, straight to the write-api/read-api, and to the bare ' +
    'baselines, interleaved (each user sends every request to each target one after the other, in a random order each time), after a warm-up of the same ' +
    `requests without think time (${WARM_USERS} users). Percentiles pool every ` +
    'sample of the runs. CPU per request: the same requests without think time, front door vs direct.',
  services: {
    ours: ['write-api', 'read-api', ...(haproxyAvailable ? (['haproxy'] as const) : [])],
    baseline: ['bare-rest', 'bare-graphql'],
  },
  async run(context) {
    const { plan } = context;
    const thinkMs = plan.quick ? 20 : 500;
    const secondsPerRun = plan.quick ? plan.durationSec : plan.durationSec * 3;
    const targets = latencyTargets.filter((t) =>
      t === 'baseline'
        ? context.sides.includes('baseline')
        : context.sides.includes('ours') && (t !== 'haproxy' || context.stack.isRunning('haproxy')),
    );
    const picker = new Picker(context.dataset, context.rng);
    const turns = targets.map((target) => ({ target, bases: basesOf(context, target) }));
    const cells: LatencyCell[] = [];
    const cpu: LatencyCpu[] = [];
    const intervals: RatioInterval[] = [];
    // Seeded: the same samples give the same interval in the report.
    const resample = mulberry32(1).next;
    /** `users` virtual users for `seconds`, with `think` ms after each answer; their samples go to `into`. */
    const runUsers = (
      users: number,
      think: number,
      seconds: number,
      into: Map<LatencyTarget, Samples> | null,
    ) => {
      const until = performance.now() + seconds * 1000;
      return Promise.all(
        Array.from({ length: users }, (_, u) => userLoop(context, turns, u, think, until, into, picker)),
      );
    };
    // Warm-up, not counted: the same requests without think time from WARM_USERS users, so every target's
    // processes have compiled their hot paths before they are timed, as a server in use has (the scenarios
    // before this one load the services directly, never the forwarding path).
    await runUsers(WARM_USERS, 0, Math.max(plan.warmupSec * 2, 0.2), null);
    for (const clients of latencyClients) {
      const samples = new Map<LatencyTarget, Samples>(
        targets.map((t) => [t, new Map(latencyKinds.map((k) => [k.name, [] as number[]]))]),
      );
      // Opens each user's connections, not counted: every target at least once per user.
      await runUsers(clients, thinkMs, Math.max(plan.warmupSec, 0.2), null);
      let requests = 0;
      for (let i = 0; i < plan.runs; i++) {
        const sent = await runUsers(clients, thinkMs, secondsPerRun * targets.length, samples);
        const count = sent.reduce((a, b) => a + b, 0);
        requests += count;
        // A run lasts 3 × --duration for each target (2 min for four at the default): say where it is.
        context.log(
          `  latency c=${clients}: run ${i + 1}/${plan.runs} done, ${count} requests (${secondsPerRun * targets.length} s a run)`,
        );
      }
      check(requests > 0, `latency c=${clients}: no request completed`);
      /** Every sample of one API's kinds, for one target. */
      const pooled = (target: LatencyTarget, api: RequestApi) =>
        latencyKinds.filter((k) => k.api === api).flatMap((k) => samples.get(target)!.get(k.name)!);
      for (const target of targets) {
        const byKind = samples.get(target)!;
        for (const kind of latencyKinds)
          cells.push(summarize(target, clients, kind.name, byKind.get(kind.name)!));
        for (const api of ['graphql', 'rest'] as const)
          cells.push(summarize(target, clients, `${api} (all)`, pooled(target, api)));
        const g = cells.find(
          (c) => c.target === target && c.clients === clients && c.kind === 'graphql (all)',
        );
        const r = cells.find((c) => c.target === target && c.clients === clients && c.kind === 'rest (all)');
        if (target === 'front-door' || target === 'haproxy') {
          for (const api of ['graphql', 'rest'] as const) {
            const interval = percentileRatioInterval(
              pooled(target, api),
              pooled('direct', api),
              95,
              resample,
            );
            if (interval) intervals.push({ door: target, clients, api, ...interval });
          }
        }
        context.log(
          `  latency/${target} c=${clients}: graphql p50 ${g?.p50.toFixed(2)} p95 ${g?.p95.toFixed(2)} ms (n ${g?.count}) | rest p50 ${r?.p50.toFixed(2)} p95 ${r?.p95.toFixed(2)} ms (n ${r?.count})`,
        );
      }
    }
    const ours = context.sides.includes('ours');
    const loaded = ours ? await measureLoaded(context, picker) : [];
    const loadedRest = ours ? await measureLoaded(context, picker, 'rest') : [];
    const loadedGraphql = ours ? await measureLoaded(context, picker, 'graphql') : [];
    const result: LatencyResult = {
      thinkMs,
      secondsPerRun,
      runs: plan.runs,
      cells,
      cpu,
      loaded,
      loadedRest,
      loadedGraphql,
      intervals,
    };
    const figures: Record<string, number> = {};
    for (const clients of latencyClients) {
      for (const api of ['graphql', 'rest'] as const) {
        const d = cellOf(result, 'direct', clients, `${api} (all)`);
        for (const [door, prefix] of [
          ['front-door', 'front'],
          ['haproxy', 'haproxy'],
        ] as const) {
          const f = cellOf(result, door, clients, `${api} (all)`);
          if (f && d && d.p95 > 0) figures[`${prefix}_over_direct_p95_${api}_c${clients}`] = f.p95 / d.p95;
        }
      }
      const f = cpu.find((x) => x.target === 'front-door' && x.clients === clients);
      const d = cpu.find((x) => x.target === 'direct' && x.clients === clients);
      const share = f && d ? frontCpuShare(f.totalCpuMsPerRequest, d.totalCpuMsPerRequest) : null;
      if (share !== null) figures[`front_cpu_share_c${clients}`] = share;
    }
    for (const [figure, measured] of [
      ['front_cpu_share_loaded', loaded],
      ['front_cpu_share_loaded_rest', loadedRest],
      ['front_cpu_share_loaded_graphql', loadedGraphql],
    ] as const) {
      const share = loadedShare(measured);
      if (share !== null) figures[figure] = share;
      const haproxyShare = loadedShare(measured, 'haproxy');
      if (haproxyShare !== null) figures[figure.replace('front_', 'haproxy_')] = haproxyShare;
    }
    return {
      name: 'latency',
      description: this.description,
      cases: [],
      figures,
      notes: [
        `Think time ${thinkMs} ms after every answer; ${plan.runs} run(s) of ${secondsPerRun} s per target and client count.`,
      ],
      latency: result,
    };
  },
};
