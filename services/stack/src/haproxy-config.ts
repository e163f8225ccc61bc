import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { composeHaproxyConfig } from '@eggmesh/rest';
import { loadConfig, parseCommandLine } from '@eggmesh/service-kit/config';

const flags = parseCommandLine({
  command: 'pnpm haproxy-config',
  summary:
    "Writes the HAProxy configuration compose runs in front of eggmesh (infra/compose/haproxy.cfg) from the\nroute table (packages/rest/src/route-table.ts): REST writes, /docs and /openapi.json to the write-api,\neverything else to the read-api replicas; HAProxy's own errors in eggmesh's JSON shape. The limits are\nthe variables below (their documented defaults unless set).",
  env: [
    'READ_API_PORT',
    'WRITE_API_PORT',
    'EGGMESH_BODY_LIMIT_BYTES',
    'EGGMESH_HTTP_HEADERS_TIMEOUT_MS',
    'EGGMESH_HTTP_REQUEST_TIMEOUT_MS',
    'EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS',
    'EGGMESH_HTTP_MAX_CONNECTIONS',
  ],
  options: {
    out: {
      type: 'string',
      value: 'FILE',
      description: 'where to write it (default: infra/compose/haproxy.cfg; - for stdout)',
    },
  },
});
const text = composeHaproxyConfig(loadConfig('stack'));
const out = flags.out ?? fileURLToPath(new URL('../../../infra/compose/haproxy.cfg', import.meta.url));
if (out === '-') process.stdout.write(text);
else {
  writeFileSync(out, text);
  process.stdout.write(`wrote ${out}\n`);
}
