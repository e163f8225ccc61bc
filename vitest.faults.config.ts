import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// The fault matrices (`pnpm faults:scaled`): minutes of SIGKILLs, so not part of `pnpm test`. They
// start their own servers; the shared ones (for the helpers they reuse) start only on demand.
export default mergeConfig(
  { ...base, test: { ...base.test, projects: undefined } },
  defineConfig({
    test: {
      include: ['services/*/faults/**/*.faults.spec.ts'],
      globalSetup: [
        './infra/mongodb/vitest-global-setup.ts',
        './infra/ferretdb/vitest-global-setup.ts',
        './infra/kafka/vitest-global-setup.ts',
      ],
      testTimeout: 1_800_000,
      hookTimeout: 300_000,
    },
  }),
);
