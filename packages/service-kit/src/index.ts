export { type Config, ConfigError, configSchema, loadConfig } from './config.js';
export { loggerOptions, type ServeOptions, serve } from './serve.js';
