import { fileURLToPath } from 'node:url';
import type { Config } from '@eggmesh/service-kit';
import type { ServiceSpec } from './supervisor.js';

const repoFile = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/**
 * A server the stack starts before its services when the configuration needs one locally (the scaled
 * tier's MongoDB-wire server; a Kafka broker the same way). `env` is what the services then need to
 * find it.
 */
export interface InfraServer extends ServiceSpec {
  readonly infra: true;
  /** TCP port it listens on (127.0.0.1); the services start once it accepts connections. */
  readonly port: number;
  /** What the services need in their environment to reach it. */
  readonly serviceEnv: Record<string, string>;
  /** One line for the banner. */
  readonly describe: string;
}

interface InfraEntry {
  /** Whether this configuration stores or streams through this server. */
  readonly needed: (config: Config) => boolean;
  readonly server: (config: Config) => InfraServer;
}

/** Every local server the supervisor knows how to start, in start order. */
const catalogue: readonly InfraEntry[] = [
  {
    needed: (config) => config.store === 'mongodb',
    server: (config) => ({
      name: 'mongodb',
      infra: true,
      // mongo-java-server (a MongoDB-wire server in Java, infra/mongodb), data under the data directory.
      script: repoFile('infra/mongodb/server.mjs'),
      env: {
        EGGMESH_DEV_MONGODB_PORT: String(config.dev.mongodbPort),
        EGGMESH_DATA_DIR: config.dataDir,
      },
      port: config.dev.mongodbPort,
      serviceEnv: { EGGMESH_MONGODB_URI: `mongodb://127.0.0.1:${config.dev.mongodbPort}` },
      describe: `mongodb     mongodb://127.0.0.1:${config.dev.mongodbPort}  (mongo-java-server, a MongoDB-wire test server; data in ${config.dataDir}/mongodb)`,
    }),
  },
  {
    needed: (config) => config.log === 'kafka',
    server: (config) => ({
      name: 'kafka',
      infra: true,
      // Apache Kafka in KRaft mode from the Maven Central jars (infra/kafka), its controller on the next
      // port, data under the data directory.
      script: repoFile('infra/kafka/server.mjs'),
      env: {
        EGGMESH_DEV_KAFKA_PORT: String(config.dev.kafkaPort),
        EGGMESH_DATA_DIR: config.dataDir,
      },
      port: config.dev.kafkaPort,
      serviceEnv: { EGGMESH_KAFKA_BROKERS: `127.0.0.1:${config.dev.kafkaPort}` },
      describe: `kafka       127.0.0.1:${config.dev.kafkaPort}  (Apache Kafka 3.9.1, KRaft, one node; data in ${config.dataDir}/kafka)`,
    }),
  },
];

/** The local servers `config` needs (none for the embedded tier). */
export function infraServers(config: Config): InfraServer[] {
  return catalogue.filter((entry) => entry.needed(config)).map((entry) => entry.server(config));
}

/**
 * The environment `pnpm start:scaled` gives the stack where the user set nothing else: MongoDB and Kafka,
 * both on local servers (`EGGMESH_LOG=store pnpm start:scaled` keeps the log in MongoDB).
 */
export const scaledEnv: Readonly<Record<string, string>> = { EGGMESH_STORE: 'mongodb', EGGMESH_LOG: 'kafka' };
