import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** The web apps the public port serves: their path, and their build (Vite) in the workspace. */
export const APPS = [
  { prefix: '/dashboard', dir: '../../../../apps/dashboard/dist' },
  { prefix: '/homestead', dir: '../../../../apps/homestead/dist' },
  { prefix: '/corporate', dir: '../../../../apps/corporate/dist' },
] as const;

/**
 * Serves each built app's files under its prefix (`/dashboard` redirects to `/dashboard/`). An app that
 * was not built (`pnpm build` builds them) answers 404; @fastify/static logs a warning at start.
 */
export async function registerApps(app: FastifyInstance): Promise<void> {
  for (const { prefix, dir } of APPS) {
    await app.register(fastifyStatic, {
      root: fileURLToPath(new URL(dir, import.meta.url)),
      prefix,
      redirect: true,
      decorateReply: false,
      // index.html names its hashed assets, so it is revalidated; the assets never change.
      setHeaders: (res, path) => {
        res.header(
          'cache-control',
          path.endsWith('.html') ? 'no-cache' : 'public, max-age=31536000, immutable',
        );
      },
    });
  }
}
