import type { TestProject } from 'vitest/node';
import { type OnDemand, onDemand } from '../test/on-demand.js';
// The names this setup provides, declared beside the functions that read them.
import type {} from '../test/shared-servers.js';
import { serverName, start } from './server.mjs';

let server: OnDemand | undefined;
const REPL_SET = 'rs0';

/**
 * Offers one FerretDB server (SQLite files in a temporary directory, free port) to the whole test run, the
 * second MongoDB-wire server the adapter's contract suites run on; it is built (once per machine) and
 * started when the first test file asks for it (infra/test/shared-servers.ts).
 *
 * It reports a replica-set name (`rs0`, and the uri names it), so the driver talks to it as to a set
 * and every FerretDB suite shows that a set name on a server without transactions changes nothing (the
 * emulator, the other server, is a standalone).
 */
export async function setup(project: TestProject): Promise<void> {
  server = onDemand(
    () => start({ replSetName: REPL_SET }),
    (running) => running.uri,
  );
  project.provide('ferretdbOnDemand', await server.listen());
  project.provide('ferretdbServer', `${serverName}, replica set ${REPL_SET}`);
}

export async function teardown(): Promise<void> {
  await server?.close();
}
