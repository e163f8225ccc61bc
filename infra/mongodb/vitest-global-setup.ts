import type { TestProject } from 'vitest/node';
import { type OnDemand, onDemand } from '../test/on-demand.js';
// The names this setup provides, declared beside the functions that read them.
import type {} from '../test/shared-servers.js';
import { serverName, start } from './server.mjs';

let server: OnDemand | undefined;

/**
 * Offers one MongoDB-wire test server (in memory, free port) to the whole test run; it starts when the
 * first test file asks for it (infra/test/shared-servers.ts), so a run that needs none starts no JVM.
 */
export async function setup(project: TestProject): Promise<void> {
  server = onDemand(start, (running) => running.uri);
  project.provide('mongodbOnDemand', await server.listen());
  project.provide('mongodbServer', serverName);
}

export async function teardown(): Promise<void> {
  await server?.close();
}
