// `@eggmesh/service-kit/config`: the configuration, the command line and the environment check, without
// Fastify, pino, prom-client or jose. The supervisor needs only these (the whole kit costs it ~25 MiB of RSS).
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
