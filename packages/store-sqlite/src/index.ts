export { ChangeSignal } from './change-signal.js';
export { type CheckpointerOptions, type CheckpointerStats, WalCheckpointer } from './checkpointer.js';
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
export {
  type ChangeFeed,
  READ_MEMO_ROWS,
  READ_MEMO_TEXT_BYTES,
  ReadMemo,
} from './read-memo.js';
export { dataFiles, openPrimaryWhenCreated, openReadStore, SqliteReadStore } from './read-store.js';
export { SqlThread, SqlThreadError, type ThreadStatement } from './sql-thread.js';
export { RECORD_CACHE_BYTES, RecordCache } from './version-tables.js';
export { WalIndexHeader } from './wal-index.js';
