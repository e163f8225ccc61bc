export { type CommitMode, chooseCommitMode, supportsTransactions } from './capabilities.js';
export { isUnreachable } from './errors.js';
export {
  MongoPrimaryStore,
  type MongoPrimaryStoreOptions,
  type MongoStoreHooks,
  openMongoPrimaryStore,
} from './primary-store.js';
export { collectionNames, MongoEntityReader, primaryEntities } from './reader.js';
