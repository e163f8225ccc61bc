export {
  closeConnectionsWhenClosing,
  embed,
  requestLogging,
  serviceApp,
  withServiceDefaults,
} from './app.js';
export { type Access, AuthError, Authenticator, type Principal, READ_SCOPE, WRITE_SCOPE } from './auth.js';
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
export {
  type AuthConfig,
  type Config,
  ConfigError,
  configSchema,
  exitCodes,
  type JsonWebKeySet,
  loadConfig,
} from './config.js';
export {
  closestName,
  editDistance,
  knownEnvNames,
  toolEnvNames,
  unknownEnvWarnings,
  withoutUnknownEnv,
} from './env-check.js';
export { EggmeshError, type ErrorCode, errorMessage, errorTable, isErrorCode } from './errors.js';
export { type EventLoopMonitor, type EventLoopStats, monitorEventLoop } from './event-loop.js';
export { applyHttpLimits, lingerOnRefusedBody } from './http-limits.js';
export {
  CONTENT_SECURITY_POLICY,
  CORS_ALLOWED_HEADERS,
  CORS_EXPOSED_HEADERS,
  CORS_METHODS,
  corsOptions,
  rateLimit,
  SECURITY_HEADERS,
  securityHeaders,
} from './http-security.js';
export { installMetrics, type Metrics } from './metrics.js';
export { healthResponseSchema, loggerOptions, type ServeOptions, serve } from './serve.js';
