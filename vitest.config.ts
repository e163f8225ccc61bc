import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

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
  ['@eggmesh/service-kit/config', 'packages/service-kit/src/config-entry.ts'],
  ['@eggmesh/service-kit', 'packages/service-kit/src/index.ts'],
  ['@eggmesh/rest', 'packages/rest/src/index.ts'],
  ['@eggmesh/write-api', 'services/write-api/src/index.ts'],
  ['@eggmesh/read-api', 'services/read-api/src/index.ts'],
  ['@eggmesh/projector', 'services/projector/src/index.ts'],
  ['@eggmesh/relay', 'services/relay/src/index.ts'],
] as const;

export default defineConfig({
  resolve: {
    alias: workspaceSources.map(([find, path]) => ({
      find: new RegExp(`^${find}$`),
      replacement: src(path),
    })),
  },
  test: {
    include: ['packages/*/test/**/*.spec.ts', 'services/*/test/**/*.spec.ts', 'perf/test/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['./infra/mongodb/vitest-global-setup.ts', './infra/kafka/vitest-global-setup.ts'],
    reporters: ['default', './infra/test/summary-reporter.ts'],
  },
});
