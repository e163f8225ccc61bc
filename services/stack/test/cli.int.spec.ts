import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { settings } from '@eggmesh/service-kit';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const scripts = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** Every command a user runs: the pnpm script (if any) and the file it ends in. */
const entries = [
  { script: 'start', file: 'services/stack/dist/main.js' },
  { script: 'seed', file: 'services/stack/dist/seed.js' },
  { script: 'rebuild-projections', file: 'services/projector/dist/rebuild.js' },
  { script: 'bench', file: 'perf/dist/bench.js' },
  { script: 'fuzz', file: 'infra/fuzz/schemathesis.mjs' },
  { script: 'haproxy-config', file: 'services/stack/dist/haproxy-config.js' },
  { script: undefined, file: 'services/write-api/dist/server.js' },
  { script: undefined, file: 'services/read-api/dist/server.js' },
  { script: undefined, file: 'services/projector/dist/main.js' },
  { script: undefined, file: 'services/relay/dist/main.js' },
  { script: undefined, file: 'services/legacy-sync/dist/main.js' },
] as const;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly dataDir: string;
}

/** Runs an entry to its end over a fresh, empty data dir and on ports nobody listens on. */
function run(file: string, args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const dataDir = mkdtempSync(join(tmpdir(), 'eggmesh-cli-'));
  dirs.push(dataDir);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, file), ...args], {
      cwd: root,
      env: { ...process.env, EGGMESH_DATA_DIR: dataDir, EGGMESH_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += String(d);
    });
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, dataDir }));
  });
}

describe('every command has --help', () => {
  it('the pnpm scripts end in these entries, so `pnpm <script> --help` reaches them', () => {
    for (const { script, file } of entries) {
      if (script === undefined) continue;
      // Nothing may come after the entry.
      expect(scripts[script], script).toMatch(
        new RegExp(`node(?: --[\\w-]+(?:=\\S+)?)* ${file.replaceAll('.', '\\.')}$`),
      );
    }
  });

  it.each(entries)(
    '$file --help prints the usage and exits 0 without starting anything',
    async ({ file }) => {
      expect(existsSync(join(root, file)), `${file} (run \`pnpm build\` first)`).toBe(true);
      const result = await run(file, ['--help']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: /);
      expect(result.stdout).toMatch(/^ {2}-h, --help +print this help and exit$/m);
      expect(result.stdout).toContain('docs/configuration.md');
      // Only variables that exist are named (besides a tool's own, which it describes itself).
      const named = [
        ...result.stdout.matchAll(/^ {2}((?:EGGMESH|[A-Z]+_API|PROJECTOR|EDGE|RELAY)_[A-Z_]+) /gm),
      ];
      if (!file.startsWith('perf/')) expect(named.length, file).toBeGreaterThan(0);
      for (const [, name] of named) {
        if (name!.startsWith('EGGMESH_FUZZ_')) continue;
        expect(Object.keys(settings), `${file} names ${name}`).toContain(name);
      }
      // Nothing started: a service would have created the data files or waited for them.
      expect(readdirSync(result.dataDir)).toEqual([]);
    },
  );

  it.each(entries)('$file with an unknown flag prints the usage on stderr and exits 2', async ({ file }) => {
    const result = await run(file, ['--no-such-flag']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("'--no-such-flag'");
    expect(result.stderr).toMatch(/^Usage: /m);
    expect(readdirSync(result.dataDir)).toEqual([]);
  });
});

describe('unknown EGGMESH_* variables', () => {
  it('are warned about at startup with the closest known name, and the command still runs', async () => {
    // seed reads its configuration, then fails to reach the (absent) write-api: a whole run without a server.
    const result = await run('services/stack/dist/seed.js', ['--url', 'http://127.0.0.1:9', '--farms', '1'], {
      EGGMESH_DATADIR: '/tmp/elsewhere',
      EGGMESH_SQLITE_SYNCH: 'full',
    });
    const warnings = result.stderr.split('\n').filter((line) => line.startsWith('warning: '));
    expect(warnings).toEqual([
      'warning: EGGMESH_DATADIR is not an eggmesh setting and is ignored; did you mean EGGMESH_DATA_DIR? (every setting: docs/configuration.md)',
      'warning: EGGMESH_SQLITE_SYNCH is not an eggmesh setting and is ignored; did you mean EGGMESH_SQLITE_SYNC? (every setting: docs/configuration.md)',
    ]);
    expect(result.stdout).toMatch(/seeding/);
    expect(result.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
    expect(result.code).toBe(1);
  });
});
