import { setTimeout as sleep } from 'node:timers/promises';
import { openBackend, openEventLog } from '@eggmesh/backends';
import { loadConfig, loggerOptions, parseCommandLine, serve } from '@eggmesh/service-kit';
import { isStoreError, storeErrorCodes } from '@eggmesh/store';
import { buildApp } from './app.js';
import { Projector } from './projector.js';

const flags = parseCommandLine({
  command: 'node services/projector/dist/main.js',
  summary:
    'Applies the event log to the projections (container inventory, hen productivity, farm output),\nexactly once in effect; serves /health and /metrics. `pnpm start` runs it under the supervisor.',
  config: 'projector',
  options: {
    batch: {
      type: 'string',
      value: 'N',
      description: 'most log entries applied in one transaction (default 2000)',
    },
    'idle-poll-ms': {
      type: 'string',
      value: 'N',
      description:
        'longest an idle projector sleeps before it looks at the log again (default 5000; it also wakes when the log moves)',
    },
  },
});
// The composition root: the backend EGGMESH_STORE and EGGMESH_LOG name, handed to the loop as ports.
const config = loadConfig('projector');
/** A whole-number flag ≥ 1, or the configuration's default. */
const count = (name: 'batch' | 'idle-poll-ms', fallback: number): number => {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : 0;
  if (value < 1) {
    process.stderr.write(`--${name} must be a whole number ≥ 1 (got ${JSON.stringify(raw)})\n`);
    process.exit(2);
  }
  return value;
};
const batchSize = count('batch', config.projector.batchSize);
const idlePollMs = count('idle-poll-ms', config.projector.idlePollMs);
const stop = new AbortController();
let running = false;

let say: (level: 'error' | 'warn' | 'info', message: string) => void = (_level, message) =>
  console.error(message);

const backend = await openBackend(config, 'projector');
const source = await openEventLog(config, backend, {
  signal: stop.signal,
  bufferEntries: Math.max(20_000, 4 * batchSize),
  onLog: (level, message) => say(level, message),
});
const projections = await backend.openProjections();
const projector = new Projector(source.log, projections.current(), batchSize);
const app = buildApp({
  config,
  projector,
  running: () => running,
  logProblem: () => source.problem(),
  logger: loggerOptions(config, 'projector'),
});
say = (level, message) => app.log[level](message);

/** Switches to the projections a rebuild made live, if it did since the last look. */
function followRebuilds(): void {
  const rebuilt = projections.follow();
  if (!rebuilt) return;
  projector.useStore(rebuilt);
  app.log.info(projections.describe(), 'switched to rebuilt projections');
}

/** Sleeps until the log head passes `position` or a rebuild goes live, idlePollMs at the latest. */
async function idle(position: number, seen: number): Promise<void> {
  const wake = new AbortController();
  const onStop = () => wake.abort();
  stop.signal.addEventListener('abort', onStop, { once: true });
  try {
    await Promise.race([
      source.log.waitBeyond(position, idlePollMs, wake.signal),
      projections.promoted(seen, idlePollMs, wake.signal),
    ]);
  } finally {
    wake.abort();
    stop.signal.removeEventListener('abort', onStop);
  }
}

async function run(): Promise<void> {
  running = true;
  while (!stop.signal.aborted) {
    try {
      const seen = projections.promotions();
      followRebuilds();
      const result = await projector.step();
      if (result.applied === 0) await idle(result.position, seen);
      else await new Promise((resolve) => setImmediate(resolve));
    } catch (error) {
      if (isStoreError(error, storeErrorCodes.CONFLICT)) {
        app.log.warn({ err: error }, 'another projector moved the checkpoint; continuing from it');
        continue;
      }
      if (isStoreError(error, storeErrorCodes.UNAVAILABLE)) {
        app.log.warn({ reason: error.message }, 'storage unreachable; retrying in 1 s');
      } else {
        app.log.error({ err: error }, 'batch failed; retrying in 1 s');
      }
      await sleep(1000, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  }
  running = false;
}

const loop = run();
await serve(app, {
  port: config.ports.projector,
  config,
  onClose: async () => {
    stop.abort();
    await loop;
    await projections.close();
    await source.close();
  },
});
app.log.info({ ...projections.describe(), log: config.log }, 'projector running');
