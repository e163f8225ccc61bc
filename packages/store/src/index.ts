export { isStoreError, StoreError, type StoreErrorCode, storeErrorCodes } from './errors.js';
export type {
  ProjectionDocument,
  ProjectionStateRow,
  ProjectionStore,
  ProjectionWrite,
} from './projection-store.js';
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
