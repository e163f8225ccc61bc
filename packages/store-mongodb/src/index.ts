export {
  Connecting,
  ConnectingEventLog,
  type ConnectingOptions,
  ConnectingPrimaryStore,
  ConnectingProjectionStore,
  ConnectingReadStore,
} from './connecting.js';
export { isOutOfSpace, isUnreachable, toStoreError } from './errors.js';
export {
  connectingMongoEventLog,
  MongoEventLog,
  type MongoEventLogOptions,
  type OpenMongoEventLogOptions,
  openMongoEventLog,
} from './event-log.js';
export {
  MongoPrimaryStore,
  type MongoPrimaryStoreOptions,
  type MongoStoreHooks,
  openMongoPrimaryStore,
} from './primary-store.js';
export {
  MongoProjectionReader,
  MongoProjectionStore,
  type MongoProjectionStoreOptions,
  openMongoProjectionStore,
  type ProjectionHooks,
} from './projection-store.js';
export { MongoReadStore, type MongoReadStoreOptions, openMongoReadStore } from './read-store.js';
export { collectionNames, MongoEntityReader, primaryEntities, projectionEntities } from './reader.js';
export type { WakeMode } from './wake.js';
