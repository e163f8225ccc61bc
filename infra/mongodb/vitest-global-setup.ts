import type { TestProject } from 'vitest/node';
import { type RunningServer, serverName, start } from './server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared MongoDB-wire test server of this run; each test uses its own database name. */
    mongodbUri: string;
    /** Which server that is, for test names. */
    mongodbServer: string;
  }
}

let server: RunningServer | undefined;

/** Starts one MongoDB-wire test server (in memory, free port) for the whole test run. */
export async function setup(project: TestProject): Promise<void> {
  server = await start();
  project.provide('mongodbUri', server.uri);
  project.provide('mongodbServer', serverName);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
