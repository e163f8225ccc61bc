// Depth-3 (farm → coops → hens) queries on random farms against a running read-api (round 17).
// Usage: node perf/scripts/depth3-load.mjs <read-api url> <primary.db> [connections] [seconds]
import Database from 'better-sqlite3';
import { runLoad } from '../dist/lib/load.js';
import { queries } from '../dist/scenarios/queries.js';

const [url, primary, connectionsArg, secondsArg] = process.argv.slice(2);
const db = new Database(primary, { readonly: true });
const farms = db.prepare('SELECT id FROM farm_current').pluck().all();
db.close();
const body = () =>
  JSON.stringify({
    query: queries.farmDepth3,
    variables: { id: farms[Math.floor(Math.random() * farms.length)] },
  });
const result = await runLoad(
  {
    label: 'depth3',
    baseUrl: url,
    connections: Number(connectionsArg ?? 100),
    steps: [
      {
        method: 'POST',
        path: '/farm/graph',
        headers: { 'content-type': 'application/json' },
        body: body(),
        setup: (request) => ({ ...request, body: body() }),
      },
    ],
  },
  Number(secondsArg ?? 10),
);
const { p50, p99, max } = result.latency;
console.log(
  JSON.stringify({
    rps: Math.round(result.rps),
    p50,
    p99,
    max,
    errors: result.errors,
    timeouts: result.timeouts,
  }),
);
