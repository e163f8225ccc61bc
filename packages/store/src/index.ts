export { isStoreError, StoreError, type StoreErrorCode, storeErrorCodes } from './errors.js';
export {
  type LoadedProjections,
  type ProjectionCommit,
  type ProjectionDocument,
  type ProjectionKeys,
  type ProjectionStateRow,
  type ProjectionStore,
  type ProjectionWrite,
  projectionKey,
} from './projection-store.js';
export type { ProjectionChange, ReadStore } from './read-store.js';
export type {
  CommitResult,
  EntityReader,
  EntityWriter,
  EventLog,
  LogEntry,
  Operation,
  PageOptions,
  PrimaryStore,
  ReadOptions,
  RelationPageOptions,
  StoredRecord,
  WriteOperation,
} from './types.js';
export { VersionSignal } from './version-signal.js';
