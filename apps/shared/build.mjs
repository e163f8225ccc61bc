// The production build (Vite) of one app under apps/, run by the root `pnpm build` after `tsc -b` has
// type-checked it. Like `tsc -b`, it does nothing when dist/ is newer than every source file (the app's
// own and apps/shared, which it imports).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const shared = new URL('.', import.meta.url).pathname;

const newest = (path) => {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
};

/**
 * Builds the app at `root` unless its dist/ is newer than its sources. `loadVite` imports the app's own
 * Vite (a dependency of the app, not of this folder), and only when there is something to build.
 */
export async function buildApp(root, loadVite) {
  const sources = ['index.html', 'vite.config.ts', 'package.json', 'src', 'public'].map((s) => join(root, s));
  const built = (() => {
    try {
      return statSync(join(root, 'dist/index.html')).mtimeMs;
    } catch {
      return -1;
    }
  })();
  if (built < Math.max(...[...sources, shared].map(newest))) {
    const { build } = await loadVite();
    await build({ root, logLevel: 'warn' });
  }
}
