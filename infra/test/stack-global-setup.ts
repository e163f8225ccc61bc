import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startStack } from '../../services/stack/test/helpers.js';
import { type OnDemand, onDemand } from './on-demand.js';
import { STARTUP_MS } from './patience.js';
// The names this setup provides, declared beside the functions that read them.
import type { SharedStack } from './shared-stacks.js';

const seedMain = fileURLToPath(new URL('../../services/stack/dist/seed.js', import.meta.url));

let stacks: OnDemand[] = [];

/**
 * Offers the browser tests two stacks as `pnpm start` runs them (services/stack/test/helpers.ts), each
 * started when the first test file asks (infra/test/shared-stacks.ts) and shared by every later one: one
 * seeded by `pnpm seed` (the projections caught up with the seed), one with EGGMESH_AUTH=jwt and
 * EGGMESH_AUTH_READS=true over an empty store. The browser project runs its files one at a time, so a
 * test's writes and its restart of the read-api never land in the middle of another file.
 */
export async function setup(project: TestProject): Promise<void> {
  const seeded = onDemand(
    async () => {
      const stack = await startStack();
      try {
        const { stdout } = await promisify(execFile)(
          process.execPath,
          [seedMain, '--url', stack.urls.write],
          {
            timeout: STARTUP_MS,
          },
        );
        const position = Number(/log position (\d+)/.exec(stdout)?.[1]);
        if (!(position > 0)) throw new Error(`pnpm seed said no log position: ${stdout}`);
        // The seed is readable (the projector has applied it) before any file reads it.
        const ready = await fetch(`${stack.urls.public}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-min-position': String(position) },
          body: JSON.stringify({ query: '{ farms(limit: 1) { id } }' }),
        });
        if (ready.headers.get('x-eggmesh-stale') !== null)
          throw new Error('the seed did not become readable');
        return { ...stack, shared: { urls: stack.urls, position } satisfies SharedStack };
      } catch (error) {
        await stack.stop();
        throw error;
      }
    },
    (running) => JSON.stringify(running.shared),
  );
  const secret = randomBytes(32).toString('hex');
  const auth = onDemand(
    async () => {
      const stack = await startStack({
        EGGMESH_AUTH: 'jwt',
        EGGMESH_JWT_SECRET: secret,
        EGGMESH_AUTH_READS: 'true',
      });
      return { ...stack, shared: { urls: stack.urls, position: 0, secret } satisfies SharedStack };
    },
    (running) => JSON.stringify(running.shared),
  );
  stacks = [seeded, auth];
  project.provide('seededStackOnDemand', await seeded.listen());
  project.provide('authStackOnDemand', await auth.listen());
}

export async function teardown(): Promise<void> {
  await Promise.all(stacks.map((stack) => stack.close()));
}
