import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ensureTools = fileURLToPath(new URL('../ensure-tools.sh', import.meta.url));

/** Chromium from the system (Debian's package): installed here when this machine can (root, apt-get). */
export function chromiumPath(): string {
  const candidates = [process.env.EGGMESH_TEST_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  const found = () => candidates.find((path): path is string => !!path && existsSync(path));
  if (!found()) execFileSync('bash', [ensureTools, 'chromium'], { stdio: 'inherit' });
  const path = found();
  if (!path) {
    throw new Error(
      'the browser tests need Chromium: install it (Debian/Ubuntu: apt-get install chromium), ' +
        'or set EGGMESH_TEST_CHROMIUM to a Chromium or Chrome binary',
    );
  }
  return path;
}

/** The flags the browser tests launch Chromium with (headless, in containers without a sandbox or GPU). */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'];
