import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { check, checkEqual, http } from '../lib/gate.js';
import { summarizeLatencies } from '../lib/stats.js';
import { newContainer, urls } from './common.js';
import type { Scenario, ScenarioResult } from './types.js';

/** Resident memory of a process (bytes), from /proc. */
function rssBytes(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return line ? Number(line[1]) * 1024 : Number.NaN;
}

const QUERY = `subscription ($id: ID!) { containerInventory(container_id: $id) { position containerInventory { current_eggs } } }`;

/** One subscriber per connection, as N dashboards would: when each saw each position (performance.now()). */
class Subscribers {
  readonly clients: Client[] = [];
  /** Per position, the arrival times of every subscriber that received it. */
  readonly arrivals = new Map<number, number[]>();
  #ready = 0;

  constructor(
    readonly url: string,
    readonly count: number,
    readonly containerId: string,
  ) {}

  /** Connects them all; resolves once every one has its first (current) document. */
  async open(): Promise<void> {
    for (let i = 0; i < this.count; i++) {
      const client = createClient({ url: this.url, webSocketImpl: WebSocket, retryAttempts: 0 });
      this.clients.push(client);
      let first = true;
      client.subscribe<{ containerInventory: { position: number } }>(
        { query: QUERY, variables: { id: this.containerId } },
        {
          next: ({ data }) => {
            const now = performance.now();
            if (first) {
              first = false;
              this.#ready += 1;
              return;
            }
            const position = data?.containerInventory.position ?? -1;
            const list = this.arrivals.get(position) ?? [];
            if (list.length === 0) this.arrivals.set(position, list);
            list.push(now);
          },
          error: (error) => {
            throw new Error(`subscriber failed: ${JSON.stringify(error)}`);
          },
          complete: () => undefined,
        },
      );
    }
    const deadline = Date.now() + 60_000;
    while (this.#ready < this.count) {
      check(Date.now() < deadline, `only ${this.#ready} of ${this.count} subscribers started`);
      await sleep(20);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.dispose()));
  }
}

export const subscriptions: Scenario = {
  name: 'subscriptions',
  description:
    'Live projections (ours only): a deposit into a container nobody else touches, then the time from the ' +
    "write's acknowledgement to each subscriber (one WebSocket each, `containerInventory`) receiving the new " +
    'document, with 1 and with 500 subscribers; and the read-api RSS per idle subscriber (500 opened).',
  services: { ours: ['write-api', 'read-api', 'projector'], baseline: [] },
  async run(context): Promise<ScenarioResult> {
    const figures: Record<string, number> = {};
    const notes: string[] = [];
    if (!context.sides.includes('ours')) {
      return { name: 'subscriptions', description: this.description, cases: [], figures, notes };
    }
    const { rest, graph } = urls(context, 'ours');
    const wsUrl = `${graph.replace(/^http/, 'ws')}/graphql`;
    const farm = context.dataset.farm(0).id;
    const created = await http('POST', `${rest}/container/api`, newContainer(context.rng, 100_000_000));
    checkEqual(created.status, 201, 'subscriptions container');
    const containerId = (created.json as { id: string }).id;
    const writes = context.plan.quick ? 5 : 100;
    const readApi = context.stack.pids(['read-api'])[0];

    for (const count of [1, 500]) {
      const before = readApi === undefined ? Number.NaN : rssBytes(readApi);
      const subs = new Subscribers(wsUrl, count, containerId);
      await subs.open();
      if (count === 500 && readApi !== undefined) {
        await sleep(1000);
        figures.idle_subscriber_kib = (rssBytes(readApi) - before) / count / 1024;
      }
      const lags: number[] = [];
      let early = 0;
      for (let i = 0; i < writes; i++) {
        const written = await http('POST', `${rest}/storage_deposit/api`, {
          container_id: containerId,
          source_type: 'farm',
          source_id: farm,
          eggs: 1,
          timestamp: new Date().toISOString(),
        });
        const acked = performance.now();
        check(written.status === 201, `deposit: HTTP ${written.status} ${written.text}`);
        const position = Number(written.headers.get('x-log-position'));
        const deadline = Date.now() + 30_000;
        while ((subs.arrivals.get(position)?.length ?? 0) < count) {
          check(Date.now() < deadline, `${count} subscribers: position ${position} did not reach them all`);
          await sleep(2);
        }
        // A document can reach a subscriber before the writer has read its own acknowledgement: 0 ms.
        for (const at of subs.arrivals.get(position) ?? []) {
          if (at < acked) early += 1;
          lags.push(Math.max(0, at - acked));
        }
      }
      await subs.close();
      const summary = summarizeLatencies(lags);
      figures[`subscribers_${count}_p50_ms`] = summary.p50;
      figures[`subscribers_${count}_p99_ms`] = summary.p99;
      figures[`subscribers_${count}_before_ack_pct`] = (100 * early) / Math.max(1, lags.length);
      context.log(
        `subscriptions: ${count} subscriber(s), ${writes} writes: p50 ${summary.p50.toFixed(1)} ms, p99 ${summary.p99.toFixed(1)} ms`,
      );
    }
    notes.push(
      'Lag: from the acknowledgement of the write (the bench reads it) to the subscriber receiving the document; the projector commits it, the read-api notices the commit and sends it.',
    );
    return { name: 'subscriptions', description: this.description, cases: [], figures, notes };
  },
};
