import type { TestProject } from 'vitest/node';
import { type OnDemand, onDemand } from '../test/on-demand.js';
// The names this setup provides, declared beside the functions that read them.
import type {} from '../test/shared-servers.js';
import { serverName, start } from './server.mjs';

let server: OnDemand | undefined;

/**
 * With EGGMESH_TEST_MONGODB_URI set, offers that server instead and starts none. Otherwise offers one
 * MongoDB-wire test server (in memory, free port) to the whole test run; it starts when the
 * first test file asks for it (infra/test/shared-servers.ts), so a run that needs none starts no JVM.
 */
export async function setup(project: TestProject): Promise<void> {
  const given = process.env.EGGMESH_TEST_MONGODB_URI;
  if (given) {
    // Tests run on a server someone else runs (a real MongoDB replica set, FerretDB): nothing starts.
    server = onDemand(
      async () => ({ uri: given, stop: async () => undefined }),
      (running) => running.uri,
    );
    project.provide('mongodbOnDemand', await server.listen());
    project.provide('mongodbServer', `the server at EGGMESH_TEST_MONGODB_URI (${hostsOf(given)})`);
    return;
  }
  server = onDemand(start, (running) => running.uri);
  project.provide('mongodbOnDemand', await server.listen());
  project.provide('mongodbServer', serverName);
}

/** The hosts of a connection string, without credentials or options, for test names. */
function hostsOf(uri: string): string {
  return uri.replace(/^mongodb(\+srv)?:\/\/([^@/]*@)?/, '').replace(/[/?].*$/, '');
}

export async function teardown(): Promise<void> {
  await server?.close();
}
