import { KafkaEventLog, kafkajsClient, projectorGroup } from '@eggmesh/log-kafka';
import type { LogConfig, LogSource } from './types.js';

/** The topic the relay publishes the primary's log to, consumed by the projector's group. */
export function kafkaLog(
  config: LogConfig,
  options: {
    readonly bufferEntries: number;
    readonly onLog: (level: 'error' | 'warn' | 'info', message: string) => void;
  },
): LogSource {
  const client = kafkajsClient({
    brokers: config.kafka.brokers,
    topic: config.kafka.topic,
    durability: config.kafka.durability,
    clientId: 'eggmesh-projector',
  });
  const log = new KafkaEventLog({
    client,
    groupId: projectorGroup(config.kafka.topic),
    bufferEntries: options.bufferEntries,
    onLog: options.onLog,
  });
  return {
    log,
    problem: () =>
      log.connected ? null : `the Kafka broker (${config.kafka.brokers.join(',')}) does not answer; retrying`,
    async close() {
      await log.close();
      await client.close();
    },
  };
}
