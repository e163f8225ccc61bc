export { type Config, ConfigError, configSchema, loadConfig } from './config.js';
export {
  closeConnectionsWhenClosing,
  loggerOptions,
  requestLogging,
  type ServeOptions,
  serve,
} from './serve.js';
