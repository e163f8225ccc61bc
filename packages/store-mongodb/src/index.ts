export { type CommitMode, chooseCommitMode, supportsTransactions } from './capabilities.js';
export { isUnreachable } from './errors.js';
export { MongoEventLog, type MongoEventLogOptions } from './event-log.js';
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
