import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { graphqlErrors, httpErrors } from '../src/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const rows = [...readme.matchAll(/^\| `([A-Z_]+)` *\| (\d{3}) *\|/gm)].map(
  (m) => [m[1]!, Number(m[2])] as const,
);
const defined = [...Object.values(graphqlErrors), ...Object.values(httpErrors)];

describe('README error table', () => {
  it('lists every code with its status', () => {
    const documented = new Map(rows);
    for (const { code, status } of defined) expect(documented.get(code), code).toBe(status);
  });

  it('lists no code the service does not have', () => {
    const known = new Set(defined.map((e) => e.code));
    expect(rows.map(([code]) => code).filter((code) => !known.has(code))).toEqual([]);
  });
});
