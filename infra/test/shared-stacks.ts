import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { STARTUP_MS } from './patience.js';
import { demand } from './shared-servers.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where to ask for the run's seeded stack (infra/test/stack-global-setup.ts). */
    seededStackOnDemand: string;
    /** Where to ask for the run's stack with EGGMESH_AUTH=jwt and EGGMESH_AUTH_READS=true. */
    authStackOnDemand: string;
  }
}

/** A stack the browser test files share: `pnpm start` on free ports. */
export interface SharedStack {
  /** Base URLs (no trailing slash) of the public port (the read-api) and of the write-api behind it. */
  readonly urls: { readonly public: string; readonly write: string; readonly projector: string };
  /** The log position of the seed's last write (0 for a stack that was not seeded). */
  readonly position: number;
  /** The HS256 secret of EGGMESH_JWT_SECRET, on the stack with auth. */
  readonly secret?: string;
}

/**
 * Waits until the public port's projections hold every write the stack has logged (the projector's
 * `eggmesh_log_head`), so a test file starts from what the files before it wrote, all of it readable.
 */
async function settled(stack: SharedStack): Promise<SharedStack> {
  const metrics = await (await fetch(`${stack.urls.projector}/metrics`)).text();
  const head = Number(/^eggmesh_log_head (\d+)/m.exec(metrics)?.[1]);
  if (!Number.isInteger(head)) throw new Error('the projector reports no eggmesh_log_head');
  const deadline = Date.now() + STARTUP_MS;
  for (;;) {
    const ready = (await (await fetch(`${stack.urls.public}/ready`)).json()) as { projections?: number };
    if ((ready.projections ?? -1) >= head) return stack;
    if (Date.now() > deadline) throw new Error(`the projections did not reach the log head ${head}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The run's stack seeded by `pnpm seed`, its projections caught up with every write so far. */
export const seededStack = async (): Promise<SharedStack> =>
  settled(JSON.parse(await demand(inject('seededStackOnDemand'))) as SharedStack);

/** The run's stack with JWT auth on writes and reads, empty but for what the test files wrote. */
export const authStack = async (): Promise<SharedStack & { secret: string }> =>
  (await settled(JSON.parse(await demand(inject('authStackOnDemand'))) as SharedStack)) as SharedStack & {
    secret: string;
  };

/**
 * Where the browser tests write their screenshots: docs/screenshots (the README shows them) with
 * EGGMESH_SCREENSHOTS=1, otherwise a temporary directory, so a test run leaves the checkout as it was.
 */
export function screenshotDir(): string {
  if (process.env.EGGMESH_SCREENSHOTS === '1') {
    const docs = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
    mkdirSync(docs, { recursive: true });
    return docs;
  }
  return `${mkdtempSync(join(tmpdir(), 'eggmesh-screenshots-'))}/`;
}
