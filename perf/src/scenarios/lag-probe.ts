import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { Rng } from '../data/prng.js';
import { check, checkEqual, GateError, http } from '../lib/gate.js';
import { SampleBuffer } from '../lib/stats.js';
import { newContainer } from './common.js';
import { queries } from './queries.js';

/** What a probe needs to go on in another thread. */
export interface LagProbeState {
  readonly rest: string;
  readonly graph: string;
  readonly sourceFarmId: string;
  readonly containerId: string;
  readonly deposits: number;
}

/** What the worker sends back when told to stop. */
interface WorkerReport {
  readonly samples: Float64Array;
  readonly waits: Float64Array;
  readonly deposits: number;
  readonly error?: string;
}

/**
 * Lag probe (ours only): deposits 1 egg into a container nobody else touches, then reads its
 * inventory with `x-min-position` set to the write's log position; the lag is the time from the
 * write's acknowledgement to a read that shows the new count. Of that, the read-api says how long
 * the read waited for the projections to reach the position (`server-timing: position;dur=`): the
 * rest is the read's own trip (its queue in a loaded read-api, the query, the response).
 *
 * During a measured run it loops in a worker thread of its own (`runInWorker`): in the bench's main
 * thread its timings would also count the event-loop delay of the load generator (autocannon's 100+
 * connections share that thread), which is the client's, not the stack's.
 */
export class LagProbe {
  readonly samples = new SampleBuffer();
  /** Per sample, the part the read-api spent waiting for the position (ms). */
  readonly waits = new SampleBuffer();
  #deposits: number;

  constructor(readonly state: Omit<LagProbeState, 'deposits'> & { deposits?: number }) {
    this.#deposits = state.deposits ?? 0;
  }

  /** Creates the probe's container and checks one round trip. */
  static async prepare(rest: string, graph: string, sourceFarmId: string, rng: Rng): Promise<LagProbe> {
    const created = await http('POST', `${rest}/container/api`, newContainer(rng, 100_000_000));
    checkEqual(created.status, 201, 'lag probe container');
    const containerId = (created.json as { id: string }).id;
    const probe = new LagProbe({ rest, graph, sourceFarmId, containerId });
    await probe.once();
    return probe;
  }

  /** One probe: the lag, and the part of it the read waited for the position (ms). */
  async once(): Promise<{ lag: number; wait: number }> {
    const { rest, graph, containerId, sourceFarmId } = this.state;
    const written = await http('POST', `${rest}/storage_deposit/api`, {
      container_id: containerId,
      source_type: 'farm',
      source_id: sourceFarmId,
      eggs: 1,
      timestamp: new Date().toISOString(),
    });
    const acked = performance.now();
    check(written.status === 201, `lag probe write: HTTP ${written.status} ${written.text}`);
    this.#deposits++;
    const position = written.headers.get('x-log-position');
    check(position, 'lag probe write: no x-log-position');
    const answer = await http(
      'POST',
      `${graph}/container_inventory/graph`,
      { query: queries.inventoryByContainer, variables: { id: containerId } },
      { 'x-min-position': position },
    );
    const lag = performance.now() - acked;
    check(answer.status === 200, `lag probe read: HTTP ${answer.status} ${answer.text}`);
    const body = answer.json as { data?: Record<string, unknown>; errors?: unknown } | undefined;
    check(body?.data && !body.errors, `lag probe read: ${answer.text}`);
    const timing = /(?:^|,)\s*position;dur=([\d.]+)/.exec(answer.headers.get('server-timing') ?? '');
    check(timing, `lag probe read: no server-timing position wait (${answer.headers.get('server-timing')})`);
    const docs = body.data.getByContainer as { current_eggs: number; total_deposits: number }[] | null;
    const doc = docs?.[0];
    if (!doc || doc.current_eggs !== this.#deposits) {
      throw new GateError(
        `lag probe: after ${this.#deposits} deposit(s) at position ${position} the inventory reads ${JSON.stringify(docs)}`,
      );
    }
    return { lag, wait: Number(timing[1]) };
  }

  /** Probes until `signal` aborts, 10 ms apart. */
  async loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const { lag, wait } = await this.once();
      this.samples.push(lag);
      this.waits.push(wait);
      await sleep(10);
    }
  }

  /** `loop` in a worker thread until `signal` aborts; its samples land in `samples`. */
  async runInWorker(signal: AbortSignal): Promise<void> {
    const state: LagProbeState = { ...this.state, deposits: this.#deposits };
    const worker = new Worker(new URL('./lag-probe-worker.js', import.meta.url), { workerData: state });
    const report = await new Promise<WorkerReport>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) =>
        reject(new Error(`the lag probe's worker exited (${code}) without a report`)),
      );
      if (signal.aborted) worker.postMessage('stop');
      else signal.addEventListener('abort', () => worker.postMessage('stop'), { once: true });
    });
    await worker.terminate();
    this.#deposits = report.deposits;
    for (const value of report.samples) this.samples.push(value);
    for (const value of report.waits) this.waits.push(value);
    if (report.error !== undefined) throw new GateError(report.error);
  }

  /** The worker's side of `runInWorker`. */
  static async workerMain(
    state: LagProbeState,
    port: { once(event: 'message', listener: () => void): void; postMessage(report: WorkerReport): void },
  ): Promise<void> {
    const probe = new LagProbe(state);
    const stop = new AbortController();
    port.once('message', () => stop.abort());
    let error: string | undefined;
    try {
      // One round unrecorded: the thread's first requests also time its own start (fetch, JIT).
      await probe.once();
      await probe.loop(stop.signal);
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    }
    port.postMessage({
      samples: probe.samples.values().slice(),
      waits: probe.waits.values().slice(),
      deposits: probe.#deposits,
      ...(error === undefined ? {} : { error }),
    });
  }
}
