import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeHaproxyConfig } from '@eggmesh/rest';
import { parseConfig, settings } from '@eggmesh/service-kit';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// These machines cannot run Docker: the compose file is checked against the configuration instead.

const root = fileURLToPath(new URL('../../../', import.meta.url));
const composeDir = join(root, 'infra/compose');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface Healthcheck {
  readonly test?: readonly string[];
  readonly timeout?: string;
  readonly start_period?: string;
}
interface Service {
  readonly image?: string;
  readonly command?: readonly string[];
  readonly environment?: Record<string, string>;
  readonly ports?: readonly string[];
  readonly volumes?: readonly string[];
  readonly healthcheck?: Healthcheck;
  readonly restart?: string;
  readonly depends_on?: Record<string, { readonly condition: string }>;
  readonly deploy?: { readonly replicas?: number };
  readonly build?: { readonly context: string; readonly dockerfile: string };
}
interface Compose {
  readonly services: Record<string, Service>;
  readonly volumes: Record<string, unknown>;
}

const compose = parse(read('infra/compose/docker-compose.yml'), { merge: true }) as Compose;
const services = compose.services;
const ours = Object.entries(services).filter(([, s]) => s.image === 'eggmesh:local');

/** Defaults as docs/configuration.md states them. */
const documented = new Map(
  [...read('docs/configuration.md').matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => [
    m[1]!,
    m[2]!.trim().replace(/`/g, ''),
  ]),
);

/** Each eggmesh service, the setting that holds its port, and whether it is published on the host. */
const portOf = {
  'write-api': 'WRITE_API_PORT',
  'read-api': 'READ_API_PORT',
  projector: 'PROJECTOR_PORT',
  relay: 'RELAY_PORT',
  'legacy-sync': 'LEGACY_SYNC_PORT',
} as const;

/** Services whose sources are being written on another branch; once there, they are checked like the rest. */
const addedByRelayWork = ['relay'];

/** Settings the compose stack leaves out, and why. */
const notForCompose = {
  EGGMESH_DEV_MONGODB_PORT: 'the local MongoDB-wire dev server; compose runs real MongoDB',
  EGGMESH_DEV_KAFKA_PORT: 'the local dev broker; compose runs its own Kafka',
  EGGMESH_JWT_SECRET:
    'a secret: passed by whoever turns EGGMESH_AUTH=jwt on (an env_file or Docker secret), never in the file',
  EGGMESH_JWKS: 'optional (EGGMESH_AUTH=jwt with keys): set beside EGGMESH_AUTH when used',
  EGGMESH_JWT_ISSUER: 'optional (EGGMESH_AUTH=jwt): set beside EGGMESH_AUTH when used',
  EGGMESH_JWT_AUDIENCE: 'optional (EGGMESH_AUTH=jwt): set beside EGGMESH_AUTH when used',
  EGGMESH_DEV_POSTGRES_PORT: 'the local dev PostgreSQL; compose runs the PostgreSQL image',
  EGGMESH_DEV_CONNECT_PORT: 'the local dev Connect worker; compose runs the Debezium Connect image',
} as const;

/** The environment a container gets when `docker compose` runs with none of these variables set. */
const resolved = (env: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(env).map(([name, value]) => {
      const m = /^\$\{([A-Z_]+):-(.*)\}$/.exec(String(value));
      return [name, m ? m[2]! : String(value)];
    }),
  );

describe('infra/compose/docker-compose.yml', () => {
  it('has the MongoDB replica set, its one-shot initiator, Kafka, PostgreSQL, Connect, every eggmesh service and HAProxy', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'connect',
        'haproxy',
        'legacy-sync',
        'postgres',
        'kafka',
        'mongo-init',
        'mongo1',
        'mongo2',
        'mongo3',
        'projector',
        'read-api',
        'relay',
        'write-api',
      ].sort(),
    );
    for (const name of ['mongo1', 'mongo2', 'mongo3']) {
      expect(services[name]!.image).toMatch(/^mongo:/);
      expect(services[name]!.command).toEqual(['mongod', '--replSet', 'rs0', '--bind_ip_all']);
    }
    const init = services['mongo-init']!;
    expect(init.restart).toBe('no');
    expect(init.command?.join(' ')).toMatch(/mongosh .*--file \/init\/mongo-init\.js/);
    expect(read('infra/compose/mongo-init.js')).toMatch(/rs\.initiate\(\{ _id: 'rs0'/);
    for (const member of ['mongo1:27017', 'mongo2:27017', 'mongo3:27017']) {
      expect(read('infra/compose/mongo-init.js')).toContain(`'${member}'`);
    }
    const kafka = services.kafka!;
    expect(kafka.image).toMatch(/^apache\/kafka:/);
    expect(kafka.environment?.KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(kafka.environment?.KAFKA_ADVERTISED_LISTENERS).toBe('PLAINTEXT://kafka:9092');
    expect(kafka.environment?.CLUSTER_ID).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(services['read-api']!.deploy?.replicas).toBe(2);
    expect(ours.map(([name]) => name).sort()).toEqual(Object.keys(portOf).sort());
  });

  it('runs the legacy tier: PostgreSQL with both schemas and logical WAL, Debezium Connect on Kafka, the layer on both', () => {
    const postgres = services.postgres!;
    expect(postgres.image).toMatch(/^postgres:1[5-9]$/);
    expect(postgres.command).toEqual(expect.arrayContaining(['postgres', 'wal_level=logical']));
    expect(postgres.environment?.POSTGRES_DB).toBe('legacy');
    // The project's own schema files, run by the image on the first start of an empty volume.
    const init = (postgres.volumes ?? []).filter((v) => v.includes('/docker-entrypoint-initdb.d/'));
    expect(init.map((v) => v.split(':')[0])).toEqual(['../postgres/sap.sql', '../postgres/salesforce.sql']);
    const connect = services.connect!;
    expect(connect.image).toMatch(/^quay\.io\/debezium\/connect:3\.6\.1\.Final$/);
    expect(connect.environment).toMatchObject({
      BOOTSTRAP_SERVERS: services.kafka!.environment?.KAFKA_ADVERTISED_LISTENERS?.replace('PLAINTEXT://', ''),
      KEY_CONVERTER: 'org.apache.kafka.connect.json.JsonConverter',
      VALUE_CONVERTER: 'org.apache.kafka.connect.json.JsonConverter',
      CONNECT_KEY_CONVERTER_SCHEMAS_ENABLE: 'false',
      CONNECT_VALUE_CONVERTER_SCHEMAS_ENABLE: 'false',
    });
    expect(Object.keys(connect.depends_on ?? {}).sort()).toEqual(['kafka', 'postgres']);
    const layer = services['legacy-sync']!;
    expect(Object.keys(layer.depends_on ?? {}).sort()).toEqual(['connect', 'postgres', 'write-api']);
    // What the layer is told resolves to those services, on their ports inside the network.
    const { legacy } = parseConfig(resolved(layer.environment ?? {}));
    expect(legacy).toMatchObject({
      source: 'sap',
      connectUrl: 'http://connect:8083',
      databaseUrl: `postgresql://postgres@postgres:5432/${postgres.environment?.POSTGRES_DB}`,
    });
    expect(connect.healthcheck?.test?.join(' ')).toContain('http://127.0.0.1:8083/connectors');
  });

  it('sets only real settings, and every setting but the local-dev ones, to values the services accept', () => {
    const known = Object.keys(settings);
    for (const [name, service] of ours) {
      const env = service.environment ?? {};
      for (const variable of Object.keys(env)) expect(known, `${name} sets ${variable}`).toContain(variable);
      expect(Object.keys(env).sort(), name).toEqual(
        known.filter((v) => !Object.hasOwn(notForCompose, v)).sort(),
      );
      // What the containers see with nothing overridden must pass the services' own validation.
      const config = parseConfig(resolved(env));
      expect(config).toMatchObject({
        host: '0.0.0.0',
        dataDir: '/data',
        store: 'mongodb',
        log: 'kafka',
        mongodb: {
          uri: 'mongodb://mongo1,mongo2,mongo3/?replicaSet=rs0&w=majority',
          projections: {
            uri: 'mongodb://mongo1,mongo2,mongo3/eggmesh_projections?replicaSet=rs0&w=majority',
            dbName: 'eggmesh_projections',
          },
        },
        trustedProxies: ['uniquelocal'],
        kafka: { brokers: ['kafka:9092'] },
        upstreams: { write: 'http://write-api:3034' },
      });
    }
  });

  it('lets each tunable be overridden by the same name and falls back to its documented default', () => {
    const scaled = new Set([
      'EGGMESH_STORE',
      'EGGMESH_MONGODB_URI',
      'EGGMESH_MONGODB_PROJECTIONS_URI',
      'EGGMESH_LOG',
      'EGGMESH_KAFKA_BROKERS',
      'EGGMESH_TRUSTED_PROXIES',
      // No default: only compose knows the legacy tier's addresses.
      'EGGMESH_LEGACY_CONNECT_URL',
      'EGGMESH_LEGACY_DB_URL',
    ]);
    const env = ours[0]![1].environment ?? {};
    let interpolated = 0;
    for (const [name, value] of Object.entries(env)) {
      const m = /^\$\{([A-Z_]+):-(.*)\}$/.exec(value);
      if (!m) continue;
      interpolated++;
      expect(m[1], name).toBe(name);
      if (!scaled.has(name)) expect(m[2], name).toBe(documented.get(name));
    }
    expect(interpolated).toBeGreaterThan(20);
  });

  it('gives every service a healthcheck (the one-shot initiator excepted), ours over HTTP /health via node', () => {
    const oneShots = new Set(
      Object.values(services).flatMap((s) =>
        Object.entries(s.depends_on ?? {})
          .filter(([, d]) => d.condition === 'service_completed_successfully')
          .map(([name]) => name),
      ),
    );
    expect([...oneShots]).toEqual(['mongo-init']);
    for (const [name, service] of Object.entries(services)) {
      if (oneShots.has(name)) continue;
      expect(service.healthcheck?.test?.length, `${name} has a healthcheck`).toBeGreaterThan(1);
    }
    for (const [name, service] of ours) {
      const port = documented.get(portOf[name as keyof typeof portOf]);
      expect(service.environment?.[portOf[name as keyof typeof portOf]], name).toBe(port);
      const test = service.healthcheck?.test ?? [];
      expect(test.slice(0, 3), name).toEqual(['CMD', 'node', '-e']);
      expect(test[3], name).toContain(`fetch('http://127.0.0.1:${port}/health')`);
    }
  });

  it('gives the checks that start a JVM or mongosh, or wait on a JVM (Kafka, MongoDB, Connect), time for it on a busy host', () => {
    const seconds = (duration: string | undefined) => Number(/^(\d+)s$/.exec(duration ?? '')?.[1] ?? 0);
    const heavy = Object.entries(services).filter(([, s]) =>
      (s.healthcheck?.test ?? []).some((part) => /mongosh|kafka-broker-api-versions|:8083\//.test(part)),
    );
    expect(heavy.map(([name]) => name).sort()).toEqual(['connect', 'kafka', 'mongo1', 'mongo2', 'mongo3']);
    for (const [name, service] of heavy) {
      expect(seconds(service.healthcheck?.timeout), name).toBeGreaterThanOrEqual(20);
      expect(seconds(service.healthcheck?.start_period), name).toBeGreaterThanOrEqual(60);
    }
  });

  it('publishes the public port through HAProxy only: not the write-api, not the read-api replicas', () => {
    for (const [name, service] of ours) {
      const port = documented.get(portOf[name as keyof typeof portOf]);
      if (name === 'read-api' || name === 'write-api') {
        expect(service.ports, name).toBeUndefined();
        continue;
      }
      expect(service.ports, name).toEqual([`${port}:${port}`]);
    }
    expect(services.haproxy!.ports).toEqual([`${documented.get('READ_API_PORT')}:5088`]);
    for (const name of ['mongo1', 'mongo2', 'mongo3', 'mongo-init', 'kafka', 'postgres', 'connect'])
      expect(services[name]!.ports).toBeUndefined();
  });

  it('runs HAProxy with the configuration `pnpm haproxy-config` writes from the route table', () => {
    const haproxy = services.haproxy!;
    expect(haproxy.image).toMatch(/^haproxy:2\.\d+/);
    expect(haproxy.volumes).toEqual(['./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro']);
    expect(Object.keys(haproxy.depends_on ?? {}).sort()).toEqual(['read-api', 'write-api']);
    // The committed file is the generator's output for the documented defaults: regenerate, never edit.
    expect(read('infra/compose/haproxy.cfg')).toBe(composeHaproxyConfig(parseConfig({})));
    // The names it routes to are the compose services', on their ports inside the network.
    const config = read('infra/compose/haproxy.cfg');
    expect(config).toContain(`write-api:${documented.get('WRITE_API_PORT')}`);
    expect(config).toContain(
      `server-template read-api- ${services['read-api']!.deploy?.replicas} read-api:5088`,
    );
  });

  it('runs entry files the workspace builds (src/<file>.ts compiled to dist/<file>.js)', () => {
    for (const [name, service] of ours) {
      const [node, file, ...rest] = service.command ?? [];
      expect([node, rest], name).toEqual(['node', []]);
      const m = /^services\/([a-z-]+)\/dist\/([a-z-]+)\.js$/.exec(file ?? '');
      expect(m, `${name}: ${file}`).not.toBeNull();
      const [, dir, entry] = m!;
      expect(dir).toBe(name);
      const source = join(root, 'services', dir!, 'src', `${entry}.ts`);
      if (addedByRelayWork.includes(name) && !existsSync(join(root, 'services', dir!))) continue;
      expect(existsSync(source), source).toBe(true);
      const tsconfig = read(`services/${dir}/tsconfig.json`);
      expect(tsconfig).toMatch(/"rootDir": "src"/);
      expect(tsconfig).toMatch(/"outDir": "dist"/);
    }
  });

  it('keeps data in named volumes and depends only on services it has', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const [source] = volume.split(':');
        if (source!.startsWith('./') || source!.startsWith('../')) {
          expect(existsSync(join(composeDir, source!)), `${name}: ${source}`).toBe(true);
          continue;
        }
        expect(Object.keys(compose.volumes), `${name}: ${volume}`).toContain(source);
      }
      for (const dependency of Object.keys(service.depends_on ?? {}))
        expect(Object.keys(services), `${name} depends on ${dependency}`).toContain(dependency);
    }
    for (const name of ['mongo1', 'mongo2', 'mongo3', 'kafka', 'write-api'])
      expect(services[name]!.volumes?.length, name).toBe(1);
  });

  it('builds every service from the one root Dockerfile: build stage, production dependencies, non-root', () => {
    for (const [name, service] of ours)
      expect(service.build, name).toEqual({ context: '../..', dockerfile: 'Dockerfile' });
    const dockerfile = read('Dockerfile');
    const stages = [...dockerfile.matchAll(/^FROM \S+ AS (\w+)$/gm)].map((m) => m[1]);
    expect(stages).toEqual(['build', 'runtime']);
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect(dockerfile).toMatch(/python3 make g\+\+/);
    expect(dockerfile).toMatch(/pnpm@10\.34\.9/);
    expect(dockerfile).toMatch(/pnpm install --frozen-lockfile --offline --prod --filter '!@eggmesh\/perf'/);
    expect(runtime).toMatch(/^COPY --from=build /m);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).not.toMatch(/pnpm install|apt-get/);
    // `pnpm start` as users run it: no node flags, no memory settings.
    expect(runtime).not.toMatch(/MALLOC_ARENA_MAX/);
    expect(runtime).toMatch(/^CMD \["node", "services\/stack\/dist\/main\.js"\]$/m);
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['**/node_modules', '**/dist', '.git', 'data']) expect(ignored).toContain(entry);
  });
});
