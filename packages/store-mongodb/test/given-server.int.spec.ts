import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sharedFerretdbUri } from '../../../infra/test/shared-servers.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const vitest = join(repo, 'node_modules/vitest/vitest.mjs');

interface JsonReport {
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly testResults: ReadonlyArray<{
    readonly assertionResults: ReadonlyArray<{ readonly fullName: string }>;
  }>;
}

/**
 * EGGMESH_TEST_MONGODB_URI points the MongoDB tests at a server someone runs instead of starting the
 * test server (infra/mongodb/vitest-global-setup.ts). Shown here by running one of the adapter's test
 * files in a nested run with it set to the shared FerretDB: the run passes and names that server.
 */
describe('EGGMESH_TEST_MONGODB_URI', () => {
  it('runs the MongoDB tests on the server it names', async () => {
    const uri = await sharedFerretdbUri();
    const out = mkdtempSync(join(tmpdir(), 'eggmesh-given-server-'));
    try {
      const report = join(out, 'report.json');
      const code = await new Promise<number>((resolve) => {
        execFile(
          process.execPath,
          [
            vitest,
            'run',
            'packages/store-mongodb/test/connection.int.spec.ts',
            '--reporter=json',
            `--outputFile=${report}`,
          ],
          { cwd: repo, env: { ...process.env, EGGMESH_TEST_MONGODB_URI: uri }, timeout: 240_000 },
          (error) => resolve(error ? Number(error.code ?? 1) : 0),
        );
      });
      const result = JSON.parse(readFileSync(report, 'utf8')) as JsonReport;
      const names = result.testResults.flatMap((file) => file.assertionResults.map((test) => test.fullName));
      const hosts = uri.replace(/^mongodb:\/\//, '').replace(/[/?].*$/, '');
      expect(code).toBe(0);
      expect(result.numFailedTests).toBe(0);
      expect(result.numPassedTests).toBeGreaterThanOrEqual(5);
      for (const name of names) expect(name).toContain(`the server at EGGMESH_TEST_MONGODB_URI (${hosts})`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 300_000);
});
