import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { legacyId, sapCleanView, sapLegacyView, viewDifferences } from '@eggmesh/legacy-sync';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, stackArgs, stopSupervisor, until } from './helpers.js';

// `pnpm start:legacy` as a user runs it: one start of PostgreSQL, Kafka, Kafka Connect with Debezium,
// the stack and the anti-corruption layer, on free ports; the README's walk-through run literally
// against it; the three projections on GraphQL against SQL over the SAP tables; then Ctrl-C.

const root = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
/** The README block that starts with this comment is the legacy walk-through. */
const walkThroughMarker = '# legacy walk-through';
const walkThrough = [...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)]
  .map((m) => m[1]!)
  .find((block) => block.startsWith(walkThroughMarker));

/** Every descendant pid of `pid` (children first found by `ps`), for the check that Ctrl-C leaves none. */
function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const [child, ppid] of table) {
      if (ppid === parent) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('pnpm start:legacy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-legacy-stack-'));
  const output: string[] = [];
  let stack: ChildProcess;
  let ports: Record<string, number>;
  let base: string;
  let databaseUrl: string;

  beforeAll(async () => {
    // PostgreSQL runs as its own account when the tests run as root: it must reach its directory.
    chmodSync(dir, 0o755);
    ports = {
      write: await freePort(),
      read: await freePort(),
      projector: await freePort(),
      legacy: await freePort(),
      postgres: await freePort(),
      kafka: await freePort(),
      connect: await freePort(),
    };
    base = `http://127.0.0.1:${ports.read}`;
    databaseUrl = `postgresql://postgres@127.0.0.1:${ports.postgres}/legacy`;
    stack = spawn(process.execPath, [...stackArgs, '--legacy'], {
      env: {
        ...process.env,
        EGGMESH_DATA_DIR: dir,
        WRITE_API_PORT: String(ports.write),
        READ_API_PORT: String(ports.read),
        PROJECTOR_PORT: String(ports.projector),
        LEGACY_SYNC_PORT: String(ports.legacy),
        EGGMESH_DEV_POSTGRES_PORT: String(ports.postgres),
        EGGMESH_DEV_KAFKA_PORT: String(ports.kafka),
        EGGMESH_DEV_CONNECT_PORT: String(ports.connect),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stack.stdout?.on('data', (d) => output.push(String(d)));
    stack.stderr?.on('data', (d) => output.push(String(d)));
    // The banner comes once every service answers and the layer's connector runs.
    await until(
      async () => (output.join('').includes('eggmesh is up') ? true : undefined),
      480_000,
      () => `; stack output:\n${output.join('')}`,
    );
  }, 500_000);

  afterAll(async () => {
    await stopSupervisor(stack);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('starts PostgreSQL, Kafka, Connect, the layer and the stack, says where each is, and none of the legacy pieces warns', () => {
    const text = output.join('');
    expect(text).toContain('legacy tier: sap → Debezium → legacy-sync');
    expect(text).toContain(`psql ${databaseUrl}`);
    expect(text).toContain(`connect     http://127.0.0.1:${ports.connect}/connectors`);
    expect(text).toContain(`kafka       127.0.0.1:${ports.kafka}`);
    expect(text).toContain(`legacy-sync http://127.0.0.1:${ports.legacy}/ready`);
    expect(text).toContain(`GraphQL     ${base}/graphql`);
    const legacyLines = text.split('\n').filter((line) => /^\[(postgres|connect|legacy-sync) *\]/.test(line));
    expect(legacyLines.length).toBeGreaterThan(0);
    expect(legacyLines.filter((line) => /\b(WARN|WARNING|ERROR|FATAL)\b/i.test(line))).toEqual([]);
  });

  it("runs the README's walk-through as written: a row changed with psql is served on GraphQL, its projection too", () => {
    expect(walkThrough, 'the README has a block starting with the walk-through marker').toBeDefined();
    const work = mkdtempSync(join(tmpdir(), 'eggmesh-walk-through-'));
    const script = walkThrough!
      .replace(/\b(localhost|127\.0\.0\.1):5088\b/g, `127.0.0.1:${ports.read}`)
      .replace(/\b(localhost|127\.0\.0\.1):5432\b/g, `127.0.0.1:${ports.postgres}`)
      .replace(/\b(localhost|127\.0\.0\.1):3038\b/g, `127.0.0.1:${ports.legacy}`);
    writeFileSync(join(work, 'walk-through.sh'), `set -e\n${script}`);
    // `pnpm legacy:simulate` writes where EGGMESH_LEGACY_DB_URL says (the README's default is 5432).
    const out = execFileSync('bash', [join(work, 'walk-through.sh')], {
      cwd: root,
      env: { ...process.env, EGGMESH_LEGACY_DB_URL: databaseUrl },
      encoding: 'utf8',
      timeout: 240_000,
    });
    rmSync(work, { recursive: true, force: true });
    expect(out).toMatch(/filled: \{"farm":3,/);
    const farm = legacyId('sap', '100', 'zfarm_mstr', ['1000']);
    // curl prints no newline after an answer: one answer per line, whatever follows it.
    const answers = out
      .replaceAll('}{', '}\n{')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const farms = answers.find((a) => (a.data as { getAll?: unknown } | undefined)?.getAll) as {
      data: {
        getAll: { id: string; name: string; farm_type: string; farmOutput: { active_hens: number }[] }[];
      };
    };
    expect(farms.data.getAll.find((one) => one.id === farm)).toMatchObject({
      name: 'Sonnenhof',
      farm_type: 'megafarm',
      farmOutput: [{ active_hens: 0 }],
    });
    expect(answers.at(-1)).toMatchObject({ status: 'ready', source: 'sap', running: true });
  }, 300_000);

  it('serves every row of client 100 as one record, and farm output, hen productivity and container inventory exactly as SQL over the SAP tables recomputes them', async () => {
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const want = await sapLegacyView(db);
      expect(want.projections.farm_output?.length).toBe(3);
      expect(want.projections.hen_productivity?.length).toBeGreaterThan(0);
      expect(want.projections.container_inventory?.length).toBeGreaterThan(0);
      // The projector folds the layer's last writes within moments: wait until they agree, then compare.
      let diff: string[] = [];
      await until(async () => {
        // Pages of 7 records: the clean side is read across many x-next-cursor pages.
        diff = viewDifferences(want, await sapCleanView(base, 7));
        return diff.length === 0 ? true : undefined;
      }, 120_000).catch(() => undefined);
      expect(diff).toEqual([]);
      const ready = (await (await fetch(`http://127.0.0.1:${ports.legacy}/ready`)).json()) as Record<
        string,
        unknown
      >;
      expect(ready).toMatchObject({ parked: 0, deadLettered: 0 });
    } finally {
      await db.end();
    }
  }, 200_000);

  it('stops everything it started on Ctrl-C (SIGINT): the services, Connect, Kafka and PostgreSQL', async () => {
    const started = descendants(stack.pid!);
    // node services, two JVMs (Kafka, Connect) and PostgreSQL's postmaster with its processes.
    expect(started.length).toBeGreaterThan(8);
    const exited = new Promise<number | null>((resolve) => stack.once('exit', (code) => resolve(code)));
    stack.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output.join('')).toContain('stopped.');
    await until(async () => (started.some(alive) ? undefined : true), 30_000).catch(() => undefined);
    expect(started.filter(alive)).toEqual([]);
  }, 120_000);
});
