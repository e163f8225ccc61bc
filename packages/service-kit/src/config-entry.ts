// `@eggmesh/service-kit/config`: the configuration, the command line and the environment check, without
// Fastify, pino, prom-client or jose: what the `pnpm start` supervisor and the tools need.
export {
  type CliEnvVar,
  type CliOption,
  type CommandLine,
  type CommandSpec,
  formatUsage,
  parseCommandLine,
  readCommandLine,
  usageError,
} from './cli.js';
export {
  type AuthConfig,
  type Config,
  ConfigError,
  type ConfigOf,
  type CoreConfig,
  type CorsOrigin,
  exitCodes,
  type HttpConfig,
  type JsonWebKeySet,
  loadConfig,
  parseConfig,
  type RestConfig,
  type Section,
  type ServiceName,
  type Setting,
  type SettingName,
  SHUTDOWN_TIMEOUT_MS,
  serviceSlices,
  settingNames,
  settings,
} from './config.js';
export {
  closestName,
  editDistance,
  knownEnvNames,
  toolEnvNames,
  unknownEnvWarnings,
  withoutUnknownEnv,
} from './env-check.js';
export { acceptsConnections, portHolder } from './port-check.js';
