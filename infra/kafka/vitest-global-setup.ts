import type { TestProject } from 'vitest/node';
import { type RunningBroker, serverName, start } from './server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Bootstrap address of the shared Kafka broker of this run; each test uses its own topic. */
    kafkaBrokers: string;
    /** Which broker that is, for test names. */
    kafkaServer: string;
  }
}

let broker: RunningBroker | undefined;

/** Starts one single-node Kafka broker (fresh temporary data, free ports) for the whole test run. */
export async function setup(project: TestProject): Promise<void> {
  broker = await start();
  project.provide('kafkaBrokers', broker.brokers);
  project.provide('kafkaServer', serverName);
}

export async function teardown(): Promise<void> {
  await broker?.stop();
}
