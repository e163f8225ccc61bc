import type { Config } from '@eggmesh/service-kit/config';
import type { Backend, BackendConfig, LogConfig, LogSource } from './types.js';

export type {
  Backend,
  BackendConfig,
  LogConfig,
  LogSource,
  ProjectionSide,
  ReadSide,
  RebuildTarget,
  WriteSide,
} from './types.js';

/**
 * The registry of storage backends, by `EGGMESH_STORE`: a new backend is one adapter package plus one
 * line here. Each is loaded only when chosen (a SQLite process never loads the MongoDB driver).
 */
const backends: Record<
  Config['store'],
  (config: BackendConfig, service: string, say: (m: string) => void) => Promise<Backend>
> = {
  sqlite: async (config, _service, say) => (await import('./sqlite.js')).sqliteBackend(config, say),
  mongodb: async (config, service) => (await import('./mongodb.js')).mongodbBackend(config, service),
};

/** The backend `config.store` names, for `service` (its name in log lines). */
export function openBackend(
  config: BackendConfig,
  service: string,
  say: (message: string) => void = (message) => console.error(message),
): Promise<Backend> {
  return backends[config.store](config, service, say);
}

/**
 * The event log a consumer reads, by `EGGMESH_LOG`: the primary's own (`store`), or the Kafka topic the
 * relay feeds (`kafka`; the primary is then not opened at all).
 */
export async function openEventLog(
  config: LogConfig,
  backend: Backend,
  options: {
    readonly signal?: AbortSignal;
    readonly bufferEntries: number;
    readonly onLog: (level: 'error' | 'warn' | 'info', message: string) => void;
  },
): Promise<LogSource> {
  if (config.log === 'kafka') return (await import('./kafka.js')).kafkaLog(config, options);
  return backend.openPrimaryLog(options.signal);
}
