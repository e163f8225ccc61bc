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
export { applySchema, changeTopic, type Source, schemaSql, sources } from './sources.js';
