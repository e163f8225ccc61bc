import type { IncomingHttpHeaders } from 'node:http';
import autocannon from 'autocannon';
import { GateError, Verdicts } from './gate.js';
import { CpuMeter } from './proc.js';
import { type LatencySummary, median, SampleBuffer, summarizeLatencies } from './stats.js';

/** Per-connection state carried between the steps of a sequence (reset when the sequence restarts). */
export type Context = Record<string, unknown>;

export interface RequestShape {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: string | undefined;
  headers?: Record<string, string> | undefined;
}

/** One request of a connection's sequence. */
export interface Step extends RequestShape {
  /** Rewrites the request from the context before it is sent; null restarts the sequence. */
  readonly setup?: (request: RequestShape, context: Context) => RequestShape | null;
  /** Returns a message when the answer is wrong. Default: the status must be 2xx. */
  readonly check?: (
    status: number,
    body: string,
    context: Context,
    headers: IncomingHttpHeaders,
  ) => string | undefined;
}

export interface LoadSpec {
  readonly label: string;
  readonly baseUrl: string;
  readonly connections: number;
  /** Each connection loops over these in order, one at a time (no pipelining). */
  readonly steps: readonly Step[];
  /** Requests per second over all connections (open-loop-ish); unlimited when absent. */
  readonly overallRate?: number | undefined;
}

export interface LoadResult {
  readonly label: string;
  readonly durationSec: number;
  /** Completed responses. */
  readonly requests: number;
  readonly rps: number;
  /** Exact percentiles over every response time (sub-millisecond, unlike autocannon's integer histogram). */
  readonly latency: LatencySummary;
  readonly non2xx: number;
  /** Answers a step's check rejected (wrong body, or a status the step did not expect). */
  readonly wrong: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly messages: readonly string[];
}

export const defaultCheck = (status: number): string | undefined =>
  status >= 200 && status < 300 ? undefined : `HTTP ${status}`;

/** Runs one autocannon load for `durationSec` and returns what it measured. */
export async function runLoad(spec: LoadSpec, durationSec: number): Promise<LoadResult> {
  const verdicts = new Verdicts();
  const requests = spec.steps.map((step): autocannon.Request => {
    const setup = step.setup;
    const checkAnswer = step.check ?? defaultCheck;
    const request: autocannon.Request = {
      method: step.method,
      path: step.path,
      onResponse: (status, body, context, headers) => {
        const message = checkAnswer(status, body, context as Context, (headers ?? {}) as IncomingHttpHeaders);
        if (message === undefined) verdicts.ok++;
        else verdicts.fail(`${step.method} ${step.path}: ${message}`);
      },
    };
    if (step.body !== undefined) request.body = step.body;
    // Only requests with a body say JSON (Fastify rejects an empty body declared as JSON).
    const json =
      step.method === 'POST' || step.method === 'PUT' ? { 'content-type': 'application/json' } : {};
    request.headers = { ...json, ...step.headers };
    if (setup) {
      request.setupRequest = ((req: autocannon.Request, context: object) =>
        setup(req as RequestShape, context as Context)) as autocannon.Request['setupRequest'];
    }
    return request;
  });
  const samples = new SampleBuffer();
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.baseUrl,
        connections: spec.connections,
        duration: durationSec,
        pipelining: 1,
        timeout: 10,
        requests,
        ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
      },
      (error, res) => (error ? reject(error) : resolve(res)),
    );
    // autocannon 8 emits (client, statusCode, bytes, responseTime); the typings lack the client.
    instance.on('response', (...args: unknown[]) => samples.push(args[args.length - 1] as number));
  });
  const wall = (performance.now() - started) / 1000;
  const durationSec_ = result.duration > 0 ? result.duration : wall;
  return {
    label: spec.label,
    durationSec: durationSec_,
    requests: samples.length,
    rps: samples.length / durationSec_,
    latency: summarizeLatencies(samples.values()),
    non2xx: result.non2xx,
    wrong: verdicts.wrong,
    errors: result.errors,
    timeouts: result.timeouts,
    messages: verdicts.messages,
  };
}

/** Throws a GateError when a load saw a wrong answer, a connection error or a timeout. */
export function assertClean(result: LoadResult): void {
  const problems: string[] = [];
  if (result.wrong > 0) problems.push(`${result.wrong} wrong answer(s): ${result.messages.join(' | ')}`);
  if (result.errors > 0) problems.push(`${result.errors} connection error(s)`);
  if (result.timeouts > 0) problems.push(`${result.timeouts} timeout(s)`);
  if (result.requests === 0) problems.push('no response at all');
  if (problems.length > 0) throw new GateError(`${result.label}: ${problems.join('; ')}`);
}

/** One measured run: the load(s) plus the CPU the server processes used meanwhile. */
export interface MeasuredRun {
  readonly loads: readonly LoadResult[];
  /** CPU ms per server process over the run. */
  readonly cpuMs: readonly number[];
  /** Server CPU ms per completed request (all loads, all server processes). */
  readonly cpuMsPerRequest: number;
}

/** Runs loads side by side (e.g. writers and readers) while metering the server processes. */
export async function measure(
  specs: readonly LoadSpec[],
  durationSec: number,
  pids: readonly number[],
  during?: (signal: AbortSignal) => Promise<void>,
): Promise<MeasuredRun> {
  const meter = new CpuMeter(pids);
  const stop = new AbortController();
  meter.start();
  // The sidecar's failure is held (not left unhandled) until the loads are done.
  const sidecar = (during ? during(stop.signal) : Promise.resolve()).then(
    () => null,
    (error: unknown) => error,
  );
  const loads = await Promise.all(specs.map((spec) => runLoad(spec, durationSec)));
  const cpuMs = meter.stop();
  stop.abort();
  const failure = await sidecar;
  if (failure) throw failure;
  const total = loads.reduce((n, l) => n + l.requests, 0);
  const cpu = cpuMs.reduce((a, b) => a + b, 0);
  return { loads, cpuMs, cpuMsPerRequest: total > 0 ? cpu / total : Number.NaN };
}

export interface SideSummary {
  /** Medians over the runs. */
  readonly rps: number;
  readonly p50: number;
  readonly p97_5: number;
  readonly p99: number;
  readonly cpuMsPerRequest: number;
  /** Totals over the runs. */
  readonly requests: number;
  readonly non2xx: number;
  readonly wrong: number;
  readonly errors: number;
  readonly runs: readonly LoadResult[];
}

/** Median of each figure over the runs of one load. */
export function summarizeRuns(runs: readonly LoadResult[], cpuMsPerRequest: readonly number[]): SideSummary {
  if (runs.length === 0) throw new GateError('no runs to summarise');
  const finiteCpu = cpuMsPerRequest.filter(Number.isFinite);
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.latency.p50)),
    p97_5: median(runs.map((r) => r.latency.p97_5)),
    p99: median(runs.map((r) => r.latency.p99)),
    cpuMsPerRequest: finiteCpu.length > 0 ? median(finiteCpu) : Number.NaN,
    requests: runs.reduce((n, r) => n + r.requests, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    wrong: runs.reduce((n, r) => n + r.wrong, 0),
    errors: runs.reduce((n, r) => n + r.errors + r.timeouts, 0),
    runs,
  };
}
