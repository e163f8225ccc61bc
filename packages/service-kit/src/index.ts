export { bootLog, connectLog } from './boot-log.js';
export {
  type CliEnvVar,
  type CliOption,
  type CommandLine,
  type CommandSpec,
  commonServiceEnv,
  formatUsage,
  parseCommandLine,
  readCommandLine,
  usageError,
} from './cli.js';
export { type Config, ConfigError, configSchema, exitCodes, loadConfig } from './config.js';
export {
  closestName,
  editDistance,
  knownEnvNames,
  toolEnvNames,
  unknownEnvWarnings,
  withoutUnknownEnv,
} from './env-check.js';
export { type EventLoopMonitor, type EventLoopStats, monitorEventLoop } from './event-loop.js';
export { applyHttpLimits } from './http-limits.js';
export {
  closeConnectionsWhenClosing,
  healthResponseSchema,
  loggerOptions,
  requestLogging,
  type ServeOptions,
  serve,
} from './serve.js';
