import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../infra/test/process.js';
import { freePort, repoRoot } from '../src/lib/env.js';

// The bench starts every server as a child process. However the bench process ends, none may be left
// running (a server left behind holds its port and a core, and skews the next run).
describe('the bench leaves no server behind', () => {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-child-service-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('when the bench process dies of an uncaught error', async () => {
    const port = await freePort();
    const server = join(dir, 'server.mjs');
    writeFileSync(
      server,
      "import { createServer } from 'node:http';\n" +
        'createServer((_, res) => res.end("ok")).listen(Number(process.env.PORT), "127.0.0.1");\n',
    );
    const bench = join(dir, 'bench.mjs');
    writeFileSync(
      bench,
      `import { ChildService } from ${JSON.stringify(join(repoRoot, 'perf/dist/lib/proc.js'))};\n` +
        `const service = await ChildService.start({ name: 'server', entry: ${JSON.stringify(server)}, ` +
        `env: { PORT: '${port}' }, cwd: ${JSON.stringify(dir)}, healthUrl: 'http://127.0.0.1:${port}/', ` +
        `logFile: ${JSON.stringify(join(dir, 'server.log'))} });\n` +
        'console.log(service.pid);\n' +
        "throw new Error('the bench failed');\n",
    );
    const run = spawnSync(process.execPath, [bench], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toMatch(/the bench failed/);
    const pid = Number(run.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    for (let i = 0; i < 40 && isAlive(pid); i++) await sleep(50);
    expect(isAlive(pid)).toBe(false);
  });
});
