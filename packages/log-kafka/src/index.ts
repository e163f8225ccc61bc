export type {
  FetchedBatch,
  IncomingMessage,
  KafkaClient,
  KafkaClientOptions,
  OutgoingMessage,
  PartitionConsumer,
  TopicDurability,
  TopicOffsets,
  TopicProducer,
} from './client.js';
export { survivesBrokerLoss } from './client.js';
export { decodeEntry, encodeEntry, messageKey } from './codec.js';
export { KafkaEventLog, type KafkaEventLogOptions, projectorGroup } from './event-log.js';
export { kafkajsClient } from './kafkajs-client.js';
export { Relay, type RelayLag, type RelayOptions, type RelaySource } from './relay.js';
