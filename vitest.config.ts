import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests run on the TypeScript sources of the workspace packages, not on their builds.
const workspaceSources = [
  ['@eggmesh/store/testing', 'packages/store/src/testing/index.ts'],
  ['@eggmesh/schema', 'packages/schema/src/index.ts'],
  ['@eggmesh/store', 'packages/store/src/index.ts'],
  ['@eggmesh/store-sqlite', 'packages/store-sqlite/src/index.ts'],
  ['@eggmesh/store-mongodb', 'packages/store-mongodb/src/index.ts'],
  ['@eggmesh/log-kafka', 'packages/log-kafka/src/index.ts'],
  ['@eggmesh/projections', 'packages/projections/src/index.ts'],
  ['@eggmesh/backends', 'packages/backends/src/index.ts'],
  ['@eggmesh/service-kit/config', 'packages/service-kit/src/config-entry.ts'],
  ['@eggmesh/service-kit', 'packages/service-kit/src/index.ts'],
  ['@eggmesh/rest', 'packages/rest/src/index.ts'],
  ['@eggmesh/write-api', 'services/write-api/src/index.ts'],
  ['@eggmesh/read-api', 'services/read-api/src/index.ts'],
  ['@eggmesh/projector', 'services/projector/src/index.ts'],
  ['@eggmesh/relay', 'services/relay/src/index.ts'],
  ['@eggmesh/legacy-sync', 'services/legacy-sync/src/index.ts'],
] as const;

const testDirs = ['packages/*/test', 'services/*/test', 'apps/*/test', 'perf/test'];
const files = (tier: string) => testDirs.map((dir) => `${dir}/**/*.${tier}.spec.ts`);
// Tests that drive a real browser (Chromium) through the served pages: they check what a user sees and
// need a browser on the machine, so they run in their own project (`browser`), not with the int tier.
const browser = testDirs.map((dir) => `${dir}/**/*.browser.int.spec.ts`);
// The MongoDB-wire servers (mongo-java-server, FerretDB) and the Kafka broker that int test files share. Each starts only when the
// first test file that needs it asks (infra/test/shared-servers.ts). The e2e tests start the stack with
// its own servers, as `pnpm start:scaled` does.
const sharedServers = [
  './infra/mongodb/vitest-global-setup.ts',
  './infra/ferretdb/vitest-global-setup.ts',
  './infra/kafka/vitest-global-setup.ts',
];

// Four projects, chosen by the tier in the file name: `unit` (code alone: no storage, socket, process
// or server), `int` (real SQLite files, sockets, child processes, the shared servers), `e2e` (the built
// stack as a user runs it), `browser` (`*.browser.int.spec.ts`: the served pages in Chromium). `pnpm test:unit` runs the first alone.
// Timeouts catch a test that never ends; they are no speed limit. A unit test that computes for seconds
// says so with its own timeout (infra/test/patience.ts). Int and e2e tests start processes, servers and
// browsers, whose start-up is CPU work that a loaded 2-core machine stretches many times over, so they
// get more by default.
const slow = { testTimeout: 120_000, hookTimeout: 180_000 };
export default defineConfig({
  resolve: {
    alias: workspaceSources.map(([find, path]) => ({
      find: new RegExp(`^${find}$`),
      replacement: src(path),
    })),
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most int and e2e time is waiting (for servers, processes, a projector to catch up), so two test
    // files run at once even on 2 cores, where vitest's default (cores - 1) would run one at a time.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', './infra/test/summary-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: files('unit') } },
      {
        extends: true,
        test: {
          name: 'int',
          include: files('int'),
          exclude: [...configDefaults.exclude, ...browser],
          globalSetup: sharedServers,
          ...slow,
        },
      },
      { extends: true, test: { name: 'e2e', include: files('e2e'), ...slow } },
      // The browser tests share the run's stacks (infra/test/stack-global-setup.ts, each started when a
      // file first asks) and run one file at a time, so no file's writes or read-api restart land in the
      // middle of another's.
      {
        extends: true,
        test: {
          name: 'browser',
          include: browser,
          globalSetup: ['./infra/test/stack-global-setup.ts'],
          fileParallelism: false,
          ...slow,
        },
      },
    ],
  },
});
