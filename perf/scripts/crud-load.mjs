// The crud-sequence scenario's load alone, against a server already running (round 17: to profile or
// to time one side, e.g. a write-api started by hand with --cpu-prof, or the bare REST baseline).
// Usage (after `pnpm build`): node perf/scripts/crud-load.mjs <base url> [connections] [seconds]
// Prints req/s, p99 (ms) and the answers the sequence's checks refused.
import { mulberry32 } from '../dist/data/prng.js';
import { runLoad } from '../dist/lib/load.js';
import { sequenceSteps } from '../dist/scenarios/crud-sequence.js';

const [baseUrl, connectionsArg, secondsArg] = process.argv.slice(2);
if (!baseUrl) {
  console.error('usage: node perf/scripts/crud-load.mjs <base url> [connections] [seconds]');
  process.exit(2);
}
const result = await runLoad(
  {
    label: 'crud-sequence',
    baseUrl,
    connections: Number(connectionsArg ?? 100),
    steps: sequenceSteps({ rng: mulberry32(1) }),
  },
  Number(secondsArg ?? 10),
);
console.log(
  JSON.stringify({
    rps: Math.round(result.rps),
    p99Ms: result.latency.p99,
    wrong: result.wrong,
    errors: result.errors,
    messages: result.messages.slice(0, 3),
  }),
);
