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
/** The auth stack, once started (by its first request, or beside the seeded one). */
let authStarted: Promise<{ stop(): Promise<void> }> | undefined;

/**
 * Offers the browser tests two stacks as `pnpm start` runs them (services/stack/test/helpers.ts), each
 * started when the first test file asks (infra/test/shared-stacks.ts) and shared by every later one: one
 * seeded by `pnpm seed` (the projections caught up with the seed), one with EGGMESH_AUTH=jwt and
 * EGGMESH_AUTH_READS=true over an empty store. The browser project runs its files one at a time, so a
 * test's writes and its restart of the read-api never land in the middle of another file.
 */
export async function setup(project: TestProject): Promise<void> {
  const secret = randomBytes(32).toString('hex');
  const startAuth = async () => {
    const stack = await startStack({
      EGGMESH_AUTH: 'jwt',
      EGGMESH_JWT_SECRET: secret,
      EGGMESH_AUTH_READS: 'true',
    });
    return { ...stack, shared: { urls: stack.urls, position: 0, secret } satisfies SharedStack };
  };
  let auth$: ReturnType<typeof startAuth> | undefined;
  const seeded = onDemand(
    async () => {
      // Every app's browser test uses both stacks: the second starts while the first is seeded.
      if (!auth$) {
        auth$ = startAuth();
        // A failed start is answered to the file that asks for this stack, not left unhandled here.
        auth$.catch(() => {});
      }
      authStarted = auth$;
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
  const auth = onDemand(
    () => {
      auth$ ??= startAuth();
      authStarted = auth$;
      return auth$;
    },
    (running) => JSON.stringify(running.shared),
  );
  stacks = [seeded, auth];
  project.provide('seededStackOnDemand', await seeded.listen());
  project.provide('authStackOnDemand', await auth.listen());
}

export async function teardown(): Promise<void> {
  await Promise.all(stacks.map((stack) => stack.close()));
  // Started beside the seeded stack but asked for by no file: stopped here (a second stop is a no-op).
  await (await authStarted?.catch(() => undefined))?.stop();
}
