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

/** What the command line asked for besides the configuration. */
export interface InfraOptions {
  /** `--legacy` (`pnpm start:legacy`): the legacy database, the broker and Kafka Connect with Debezium. */
  readonly legacy?: boolean;
}

interface InfraEntry {
  /** Whether this configuration stores or streams through this server. */
  readonly needed: (config: Config, options: InfraOptions) => boolean;
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
    needed: (config, options) => config.log === 'kafka' || options.legacy === true,
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
  {
    needed: (_config, options) => options.legacy === true,
    server: (config) => {
      const url = `postgresql://postgres@127.0.0.1:${config.dev.postgresPort}/legacy`;
      return {
        name: 'postgres',
        infra: true,
        // Debian's PostgreSQL (infra/postgres), wal_level=logical, the database `legacy` with the SAP
        // and Salesforce schemas, data under the data directory.
        script: repoFile('infra/postgres/server.mjs'),
        env: {
          EGGMESH_DEV_POSTGRES_PORT: String(config.dev.postgresPort),
          EGGMESH_DATA_DIR: config.dataDir,
        },
        port: config.dev.postgresPort,
        serviceEnv: { EGGMESH_LEGACY_DB_URL: url },
        describe: `postgres    ${url}  (the legacy systems of record, schemas sap and salesforce; psql ${url})`,
      };
    },
  },
  {
    needed: (_config, options) => options.legacy === true,
    server: (config) => ({
      name: 'connect',
      infra: true,
      // Kafka Connect in distributed mode with Debezium's PostgreSQL connector (infra/connect); its
      // state lives in the broker, so it starts once the broker accepts connections.
      after: ['kafka'],
      script: repoFile('infra/connect/server.mjs'),
      env: {
        EGGMESH_DEV_CONNECT_PORT: String(config.dev.connectPort),
        EGGMESH_KAFKA_BROKERS: `127.0.0.1:${config.dev.kafkaPort}`,
        EGGMESH_DATA_DIR: config.dataDir,
      },
      port: config.dev.connectPort,
      serviceEnv: { EGGMESH_LEGACY_CONNECT_URL: `http://127.0.0.1:${config.dev.connectPort}` },
      describe: `connect     http://127.0.0.1:${config.dev.connectPort}/connectors  (Kafka Connect 4.3.0 + Debezium 3.6.1, group eggmesh-connect)`,
    }),
  },
];

/** The local servers `config` needs (none for the embedded tier without `--legacy`). */
export function infraServers(config: Config, options: InfraOptions = {}): InfraServer[] {
  return catalogue.filter((entry) => entry.needed(config, options)).map((entry) => entry.server(config));
}

/**
 * The environment `pnpm start:scaled` gives the stack where the user set nothing else: MongoDB and Kafka,
 * both on local servers (`EGGMESH_LOG=store pnpm start:scaled` keeps the log in MongoDB).
 */
export const scaledEnv: Readonly<Record<string, string>> = { EGGMESH_STORE: 'mongodb', EGGMESH_LOG: 'kafka' };
