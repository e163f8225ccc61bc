export { type CaptureOptions, captureName, databaseOf, registerCapture } from './capture.js';
export {
  type ConnectorStatus,
  connectorConfig,
  connectorStatus,
  isRunning,
  type LegacyDatabase,
  putConnector,
  restartConnector,
  waitRunning,
} from './connect.js';
export {
  type FieldRule,
  LEGACY_NAMESPACE,
  legacyId,
  type Mapped,
  mapRow,
  type Row,
  type SourceMapping,
  type TableMapping,
  Unmappable,
} from './mapping.js';
export {
  type EconomyView,
  sapCleanView,
  sapLegacyView,
  viewDifferences,
  viewTotals,
} from './reconcile.js';
export { salesforceMapping } from './salesforce.js';
export { SalesforceSimulator } from './salesforce-simulator.js';
export { sapMapping } from './sap.js';
export { type FillOptions, type LegacySimulator, SapSimulator, type SimulatorOptions } from './simulator.js';
export { applySchema, changeTopic, type Source, schemaSql, sources } from './sources.js';
export { type DeadLetter, type ParkedRecord, SyncState } from './state.js';
export { LegacySync, type LegacySyncOptions, type SyncStatus } from './sync.js';
