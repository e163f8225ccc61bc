// The dashboard's production build (Vite), run by the root `pnpm build` after `tsc -b` has type-checked
// it. Like `tsc -b`, it does nothing when dist/ is newer than every source file.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const sources = ['index.html', 'vite.config.ts', 'package.json', 'src'];

const newest = (path) => {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
};
const built = (() => {
  try {
    return statSync(join(root, 'dist/index.html')).mtimeMs;
  } catch {
    return -1;
  }
})();

if (built < Math.max(...sources.map((s) => newest(join(root, s))))) {
  // Vite is loaded only when there is something to build: a no-op stays a file-date check.
  const { build } = await import('vite');
  await build({ root, logLevel: 'warn' });
}
