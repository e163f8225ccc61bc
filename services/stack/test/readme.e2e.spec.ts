// Every example of the root README.md that calls the API runs here, literally and in order, in one
// bash against a started stack (only the public address is rewritten to the stack's free port). Each
// command must exit 0 and answer without an error; where the README shows an answer (`# → …`), the
// real one has the same shape (the same keys, nested) and no empty data.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningStack, startStack } from './helpers.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');

interface Command {
  /** The command as the README shows it (continuation lines joined). */
  readonly text: string;
  /** The answer the README shows for it, if any (`# → …`). */
  shown?: string;
  /** The variable it assigns (`FARM=$(…)`), if any. */
  readonly assigns?: string;
}

/** The fenced shell blocks of a markdown text, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:sh|bash|shell|console)\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
}

/** The commands of a block: `\\`-continued lines joined, comments dropped, `# → …` kept as answers. */
function commandsOf(block: string): Command[] {
  const commands: Command[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    if (pending) {
      pending += `\n${line}`;
      if (!line.endsWith('\\')) {
        commands.push(command(pending));
        pending = '';
      }
      continue;
    }
    const trimmed = line.trim();
    const shown = /^# → (.*)$/.exec(trimmed);
    if (shown) {
      const last = commands.at(-1);
      if (last) last.shown = shown[1];
      continue;
    }
    // An answer that goes on over more lines: `#` and more spaces than after the arrow.
    const more = /^# {3,}(.*)$/.exec(trimmed);
    const last = commands.at(-1);
    if (more && last?.shown !== undefined) {
      last.shown += more[1];
      continue;
    }
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    if (line.endsWith('\\')) pending = line;
    else commands.push(command(line));
  }
  return commands;
}

function command(text: string): Command {
  const assigns = /^([A-Z_]+)=\$\(/.exec(text)?.[1];
  return assigns ? { text, assigns } : { text };
}

/** The keys of a JSON value, nested (arrays by their first element): what "the same shape" means. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, shape(v)]),
    );
  }
  return typeof value;
}

/** Every leaf under `data` is there: no null object, no empty list. */
function emptiesIn(value: unknown, path = 'data'): string[] {
  if (value === null) return [path];
  if (Array.isArray(value))
    return value.length === 0 ? [path] : value.flatMap((v, i) => emptiesIn(v, `${path}[${i}]`));
  if (typeof value === 'object')
    return Object.entries(value as object).flatMap(([k, v]) => emptiesIn(v, `${path}.${k}`));
  return [];
}

/**
 * Blocks that are not API calls: the workspace's own commands, which the rest of the suite covers, and
 * `docker compose` (no Docker here: compose.unit.spec.ts checks the file against the configuration).
 */
// The workspace's own commands (package.json's scripts: the suite runs the ones it covers, the rest are
// the fault matrices and benchmarks a user runs), and the legacy walk-through's PostgreSQL lines (psql,
// the dev server), which need a PostgreSQL the README reader starts: the legacy tests start the same
// server and run the same SQL through the client library.
const scripts = Object.keys(
  (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts,
).map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
const workspaceCommand = new RegExp(
  `^((npx -y pnpm@[\\d.]+ |pnpm )(install|${scripts.join('|')})(?![\\w:-])|docker compose |psql postgresql://|node infra/postgres/server\\.mjs )`,
);

function requireTool(name: string, hint: string): void {
  if (spawnSync('bash', ['-c', `command -v ${name}`]).status === 0) return;
  execFileSync('bash', [join(root, 'infra/ensure-tools.sh'), name], { stdio: 'inherit' });
  if (spawnSync('bash', ['-c', `command -v ${name}`]).status !== 0) {
    throw new Error(`the README examples need ${name}: install it (${hint})`);
  }
}

/** The legacy walk-through needs `pnpm start:legacy`: services/stack/test/legacy.e2e.spec.ts runs it. */
const isLegacyWalkThrough = (block: string) => block.startsWith('# legacy walk-through');

describe('README examples', () => {
  const blocks = shellBlocks(readme).filter((block) => !isLegacyWalkThrough(block));
  const api = blocks.filter((b) => /\bcurl\b/.test(b));
  const commands = api.flatMap(commandsOf);

  it('every shell block is either an API example (run below) or a workspace command', () => {
    expect(blocks.length).toBeGreaterThan(2);
    expect(commands.length).toBeGreaterThan(8);
    for (const block of blocks.filter((b) => !api.includes(b))) {
      for (const c of commandsOf(block))
        expect(c.text, 'a README shell line nobody runs').toMatch(workspaceCommand);
    }
  });

  describe('run against a started stack', () => {
    let stack: RunningStack;
    let work: string;
    const results: Array<{ command: Command; rc: number; out: string }> = [];

    beforeAll(async () => {
      requireTool('jq', 'Debian: apt-get install jq');
      requireTool('curl', 'Debian: apt-get install curl');
      stack = await startStack();
      work = mkdtempSync(join(tmpdir(), 'eggmesh-readme-'));
      const host = new URL(stack.urls.public).host;
      // One bash runs them all, in order, so variables carry over; each answer goes to its own file.
      const script = commands
        .map((c, i) => {
          const text = c.text.replace(/\b(localhost|127\.0\.0\.1):5088\b/g, host);
          const out = join(work, `out-${i}`);
          const after = c.assigns ? `; printf '%s' "$${c.assigns}"` : '';
          return `{ ${text}${after}\n} > ${out} 2>&1; echo $? > ${out}.rc`;
        })
        .join('\n');
      writeFileSync(join(work, 'readme.sh'), `${script}\n`);
      execFileSync('bash', [join(work, 'readme.sh')], { cwd: work, timeout: 60_000 });
      commands.forEach((command, i) => {
        const out = join(work, `out-${i}`);
        results.push({
          command,
          rc: Number(readFileSync(`${out}.rc`, 'utf8').trim()),
          out: readFileSync(out, 'utf8'),
        });
      });
    }, 120_000);

    afterAll(async () => {
      await stack?.stop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it('each command exits 0; each assignment keeps an id or a number', () => {
      for (const { command, rc, out } of results) {
        expect(rc, `${command.text}\n→ ${out}`).toBe(0);
        if (command.assigns) expect(out, command.text).toMatch(/^([0-9a-f-]{36}|\d+)$/);
      }
      const assigned = results.filter((r) => r.command.assigns).map((r) => r.command.assigns);
      expect(assigned).toEqual(['FARM', 'COOP', 'HEN', 'POS', 'AT']);
    });

    it('each answer is JSON without an error; GraphQL answers have data, none of it empty', () => {
      for (const { command, out } of results.filter((r) => !r.command.assigns)) {
        const body = JSON.parse(out) as Record<string, unknown>;
        expect(body, command.text).not.toHaveProperty('error');
        expect(body, command.text).not.toHaveProperty('errors');
        if (/\/graph\b/.test(command.text)) expect(emptiesIn(body.data), command.text).toEqual([]);
      }
    });

    it('each answer the README shows has the shape of the real one', () => {
      const shown = results.filter((r) => r.command.shown);
      expect(shown.length).toBeGreaterThanOrEqual(4);
      for (const { command, out } of shown) {
        expect(shape(JSON.parse(out)), command.text).toEqual(shape(JSON.parse(command.shown!)));
      }
    });

    it('the at example reads the farm as it was before the update, the read-your-write one sees the eggs', () => {
      const answer = (pattern: RegExp) => JSON.parse(results.find((r) => pattern.test(r.command.text))!.out);
      expect(answer(/at: '\$AT'/).data.getById).toMatchObject({
        farm_type: 'local_farm',
        coops: [{ name: 'Coop 1' }],
      });
      expect(answer(/x-min-position/).data.getByHen).toEqual([
        expect.objectContaining({ eggs_today: 2, total_eggs: 2 }),
      ]);
    });
  });
});
