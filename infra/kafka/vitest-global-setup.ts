import type { TestProject } from 'vitest/node';
import { type OnDemand, onDemand } from '../test/on-demand.js';
// The names this setup provides, declared beside the functions that read them.
import type {} from '../test/shared-servers.js';
import { serverName, start } from './server.mjs';

let broker: OnDemand | undefined;

/**
 * Offers one single-node Kafka broker (fresh temporary data, free ports) to the whole test run; it starts
 * when the first test file asks for it (infra/test/shared-servers.ts), so a run that needs none starts
 * no JVM.
 */
export async function setup(project: TestProject): Promise<void> {
  broker = onDemand(
    () => start(),
    (running) => running.brokers,
  );
  project.provide('kafkaOnDemand', await broker.listen());
  project.provide('kafkaServer', serverName);
}

export async function teardown(): Promise<void> {
  await broker?.close();
}
