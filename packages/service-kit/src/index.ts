export {
  closeConnectionsWhenClosing,
  requestLogging,
  serviceApp,
  withServiceDefaults,
} from './app.js';
export { type Access, AuthError, Authenticator, type Principal, READ_SCOPE, WRITE_SCOPE } from './auth.js';
export { bootLog, connectLog } from './boot-log.js';
// The configuration, command line and env check: one list, shared with the light ./config entry.
export * from './config-entry.js';
export { EggmeshError, type ErrorCode, errorMessage, errorTable, isErrorCode } from './errors.js';
export {
  answerClientError,
  applyHttpLimits,
  lingerOnRefusedBody,
  maxHeaderBytes,
} from './http-limits.js';
export {
  API_CSP,
  CORS_ALLOWED_HEADERS,
  CORS_EXPOSED_HEADERS,
  CORS_METHODS,
  corsOptions,
  helmetOptions,
  openAccessWarnings,
  PAGE_CSP,
  pageHelmetOptions,
} from './http-security.js';
export { createMetrics, installMetrics, type Metrics } from './metrics.js';
export { healthResponseSchema, loggerOptions, type ServeOptions, serve } from './serve.js';
export { type ServicePluginOptions, servicePlugin } from './service-plugin.js';
