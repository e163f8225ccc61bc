import { fileURLToPath } from 'node:url';
import type { Config } from '@eggmesh/service-kit';
import type { ServiceSpec } from './supervisor.js';

/** The dev broker's launcher (infra/kafka/server.mjs): a KRaft Kafka from the Maven Central jars. */
const brokerScript = fileURLToPath(new URL('../../../infra/kafka/server.mjs', import.meta.url));

/**
 * What the stack runs beside the services when the log is on Kafka (EGGMESH_LOG=kafka): the relay, and
 * the local single-node broker (port EGGMESH_DEV_KAFKA_PORT, data in EGGMESH_DATA_DIR/kafka) when the
 * brokers configured are that local one. The broker has no /health: the relay's /ready tells whether
 * it answers.
 */
export function kafkaServices(
  config: Config,
  script: (path: string) => string,
  url: (port: number) => string,
): ServiceSpec[] {
  if (config.log !== 'kafka') return [];
  const local = `${config.kafka.devPort}`;
  const onlyLocal =
    config.kafka.brokers.length > 0 &&
    config.kafka.brokers.every(
      (b) => /^(127\.0\.0\.1|localhost|\[::1\]):\d+$/.test(b) && b.endsWith(`:${local}`),
    );
  return [
    ...(onlyLocal ? [{ name: 'kafka', script: brokerScript }] : []),
    { name: 'relay', script: script('relay/dist/main.js'), healthUrl: `${url(config.ports.relay)}/health` },
  ];
}
