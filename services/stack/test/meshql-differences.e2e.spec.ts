// docs/api.md "Differences from MeshQL": every row of its table is a request and the answer a MeshQL
// user gets. Each runs here, as written, against a started stack through the public port.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningStack, startStack } from './helpers.js';

const doc = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');

interface Row {
  readonly line: string;
  readonly method: string;
  readonly path: string;
  readonly contentType: string;
  readonly body: string | undefined;
  readonly status: number;
  readonly code: string;
  readonly issue?: { readonly code: string; readonly path: string };
}

/** The table's rows: `METHOD /path [content/type] [body]` and `STATUS \`CODE\`[, issue \`x\` at \`y\`]`. */
function rows(markdown: string): Row[] {
  const start = markdown.indexOf('## Differences from MeshQL');
  expect(start, 'docs/api.md has a "Differences from MeshQL" section').toBeGreaterThan(0);
  const section = markdown.slice(start).split(/\n## /)[0]!;
  const out: Row[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split(' | ');
    if (cells.length < 3 || !line.startsWith('|')) continue;
    const request = /^`(GET|POST|PUT|DELETE) (\S+)(?: ([a-z]+\/[a-z+-]+))?(?: (.+))?`$/.exec(
      cells[1]!.trim(),
    );
    const answer = /^(\d{3}) `([A-Z_]+)`(?:, issue `(\w+)` at `([\w.]+)`)?/.exec(cells[2]!.trim());
    if (!request || !answer) continue;
    out.push({
      line,
      method: request[1]!,
      path: request[2]!,
      contentType: request[3] ?? 'application/json',
      body: request[4],
      status: Number(answer[1]),
      code: answer[2]!,
      ...(answer[3] ? { issue: { code: answer[3], path: answer[4]! } } : {}),
    });
  }
  return out;
}

describe('docs/api.md: Differences from MeshQL', () => {
  const table = rows(doc);
  let stack: RunningStack;
  let farmId: string;

  beforeAll(async () => {
    stack = await startStack();
    const created = await fetch(`${stack.urls.public}/farm/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Green Acres', farm_type: 'megafarm', zone: 'north' }),
    });
    expect(created.status).toBe(201);
    farmId = ((await created.json()) as { id: string }).id;
  }, 90_000);
  afterAll(async () => stack?.stop());

  it('lists the differences a MeshQL user meets, REST and GraphQL', () => {
    expect(table.length).toBeGreaterThanOrEqual(20);
    const codes = new Set(table.map((r) => r.code));
    for (const code of [
      'EGGMESH_VALIDATION',
      'EGGMESH_PROJECTION_READ_ONLY',
      'EGGMESH_BAD_ID',
      'EGGMESH_BAD_QUERY',
      'EGGMESH_ALREADY_EXISTS',
    ]) {
      expect(codes, code).toContain(code);
    }
  });

  it('answers each row as documented', async () => {
    const fill = (text: string) =>
      text.replaceAll('<farm-id>', farmId).replaceAll('<uuid>', () => randomUUID());
    const failures: string[] = [];
    for (const row of table) {
      const path = fill(row.path);
      const graph = /\/graph(ql)?$/.test(path);
      let body = row.body === undefined ? undefined : fill(row.body);
      // A GraphQL row shows the query document; JSON (a batch) is sent as it is.
      if (graph && body !== undefined && !/^[[{]"/.test(body) && !body.startsWith('[{')) {
        body = JSON.stringify({ query: body });
      }
      const response = await fetch(`${stack.urls.public}${path}`, {
        method: row.method,
        headers: body === undefined ? {} : { 'content-type': row.contentType },
        body,
      });
      const answer = (await response.json()) as {
        code?: string;
        issues?: Array<{ code: string; path: Array<string | number> }>;
        errors?: Array<{ extensions?: { code?: string } }>;
      };
      const code = answer.code ?? answer.errors?.[0]?.extensions?.code;
      const issue = answer.issues?.[0];
      const ok =
        response.status === row.status &&
        code === row.code &&
        (!row.issue || (issue?.code === row.issue.code && issue.path.join('.') === row.issue.path));
      if (!ok) failures.push(`${row.line}\n  got ${response.status} ${JSON.stringify(answer)}`);
    }
    expect(failures).toEqual([]);
  });
});
