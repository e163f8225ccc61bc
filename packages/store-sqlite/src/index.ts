export { ChangeSignal } from './change-signal.js';
export { openDatabase, type SqliteDatabase, type Synchronous } from './database.js';
export {
  openPrimaryStore,
  PRIMARY_LAYOUT_VERSION,
  type PrimaryStoreOptions,
  primaryEntities,
  SqlitePrimaryStore,
} from './primary-store.js';
export {
  BulkProjectionStore,
  currentGeneration,
  newGenerationName,
  openBulkProjectionStore,
  openProjectionStore,
  ProjectionReader,
  type ProjectionStoreOptions,
  projectionEntities,
  promoteGeneration,
  removeStaleGenerations,
  SqliteProjectionStore,
} from './projection-store.js';
export { READ_MEMO_ROWS, ReadMemo } from './read-memo.js';
export { dataFiles, openPrimaryWhenCreated, openReadStore, SqliteReadStore } from './read-store.js';
