#!/usr/bin/env node
// `pnpm faults:scaled [--server emulator|ferretdb] [--rounds N]`: the scaled tier's fault matrix
// (services/relay/faults/scaled.faults.spec.ts) on the chosen MongoDB-wire server.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { server: { type: 'string', default: 'emulator' }, rounds: { type: 'string', default: '10' } },
});
if (!['emulator', 'ferretdb'].includes(values.server)) {
  console.error(`--server must be emulator or ferretdb, got ${values.server}`);
  process.exit(2);
}
if (!/^[1-9]\d*$/.test(values.rounds)) {
  console.error(`--rounds must be a positive whole number, got ${values.rounds}`);
  process.exit(2);
}
const root = fileURLToPath(new URL('../../', import.meta.url));
const result = spawnSync(
  process.execPath,
  [
    fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url)),
    'run',
    '--config',
    'vitest.faults.config.ts',
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, EGGMESH_FAULTS_SERVER: values.server, EGGMESH_FAULTS_ROUNDS: values.rounds },
  },
);
process.exit(result.status ?? 1);
