import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

/** Event-loop health as /health reports it: delays in ms over the last full minute (or since start). */
export interface EventLoopStats {
  readonly delayP50Ms: number;
  readonly delayP99Ms: number;
  readonly delayMaxMs: number;
  /** Share of the window the loop spent running code (0–1). */
  readonly utilization: number;
  readonly windowS: number;
}

export interface EventLoopMonitor {
  stats(): EventLoopStats;
  stop(): void;
}

const WINDOW_MS = 60_000;
/**
 * How often the delay histogram samples the loop. Each sample wakes the loop, and at rest the wake-ups
 * are what a process costs: at 20 ms an idle process spent about 0.3% of a core on it, at 100 ms under
 * 0.1% (measured over 60 s, /proc/<pid>/stat), and the idle stack (four processes) has 0.5% in all.
 * Once a second still gives 60 samples a minute, and a stall shows in the maximum whatever the rate.
 */
const RESOLUTION_MS = 1000;

// The watchdog thread, kept as source text so it runs the same from the TypeScript sources (tests) and
// from dist. It sleeps in Atomics.wait (no CPU) and wakes every checkMs to see whether the main
// thread's heartbeat counter moved; when it has not moved for stallMs, it writes one fatal pino-shaped
// line straight to fd 1 (the main thread, which owns process.stdout, is stuck) and SIGKILLs the process.
const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const { beats, stallMs, checkMs, service } = workerData;
const view = new Int32Array(beats);
let seen = Atomics.load(view, 0);
let since = Date.now();
for (;;) {
  Atomics.wait(view, 0, seen, checkMs);
  const now = Date.now();
  const current = Atomics.load(view, 0);
  if (current !== seen) {
    seen = current;
    since = now;
    continue;
  }
  const stalledMs = now - since;
  if (stalledMs >= stallMs) {
    const line = { level: 60, time: now, pid: process.pid, service, stalledMs, limitMs: stallMs,
      msg: 'event loop blocked for ' + stalledMs + ' ms (EGGMESH_EVENT_LOOP_STALL_MS=' + stallMs + '); killing the process' };
    try { writeSync(1, JSON.stringify(line) + '\\n'); } catch {}
    process.kill(process.pid, 'SIGKILL');
  }
}
`;

/**
 * Watches the main thread's event loop: measures its delay (perf_hooks) for /health and, when
 * `stallMs` > 0, starts a watchdog thread that kills the process once the loop has not ticked for
 * `stallMs`. A stuck process that stays up answers nothing; killed, its supervisor restarts it. Nothing
 * here keeps the process alive: the timer and the thread are unref'd.
 */
export function monitorEventLoop(options: {
  readonly stallMs: number;
  readonly service: string;
}): EventLoopMonitor {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let windowStart = performance.now();
  let utilizationStart = performance.eventLoopUtilization();
  let previous: EventLoopStats | null = null;

  const current = (): EventLoopStats => {
    // A sample is the time between two ticks of a RESOLUTION_MS timer: the delay is what exceeds it.
    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);
    const empty = histogram.count === 0;
    return {
      delayP50Ms: empty ? 0 : ms(histogram.percentile(50)),
      delayP99Ms: empty ? 0 : ms(histogram.percentile(99)),
      delayMaxMs: empty ? 0 : ms(histogram.max),
      utilization: Math.round(performance.eventLoopUtilization(utilizationStart).utilization * 1000) / 1000,
      windowS: Math.round((performance.now() - windowStart) / 1000),
    };
  };

  const roll = () => {
    if (performance.now() - windowStart < WINDOW_MS) return;
    previous = current();
    histogram.reset();
    windowStart = performance.now();
    utilizationStart = performance.eventLoopUtilization();
  };

  // With a watchdog, a heartbeat the thread watches (it also rolls the window); without one, no timer
  // at all: the window rolls when the stats are read.
  const beats = new SharedArrayBuffer(4);
  const view = new Int32Array(beats);
  const heartbeatMs = Math.max(10, Math.min(1000, Math.floor(options.stallMs / 5)));
  const timer =
    options.stallMs > 0
      ? setInterval(() => {
          Atomics.add(view, 0, 1);
          roll();
        }, heartbeatMs)
      : undefined;
  timer?.unref();

  let worker: Worker | null = null;
  if (timer) {
    worker = new Worker(WATCHDOG_SOURCE, {
      eval: true,
      workerData: { beats, stallMs: options.stallMs, checkMs: heartbeatMs, service: options.service },
      // The thread needs almost nothing; keep its heap small.
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
      stdout: false,
      stderr: false,
    });
    worker.unref();
  }

  return {
    stats: () => {
      roll();
      return previous ?? current();
    },
    stop: () => {
      clearInterval(timer);
      histogram.disable();
      void worker?.terminate();
      worker = null;
    },
  };
}
