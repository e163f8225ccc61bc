export { type Config, ConfigError, configSchema, loadConfig } from './config.js';
export { loggerOptions, requestLogging, type ServeOptions, serve } from './serve.js';
