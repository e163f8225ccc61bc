import { readFileSync } from 'node:fs';
import { errorCatalogue } from '@eggmesh/write-api';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
const rows = [...doc.matchAll(/^\| `(EGGMESH_[A-Z_]+)` \| (\d{3}) \|/gm)].map(
  (m) => [m[1]!, Number(m[2])] as const,
);

describe('docs/api.md error table', () => {
  it('lists every write-api error code with its status', () => {
    const documented = new Map(rows);
    for (const [code, { status }] of Object.entries(errorCatalogue)) {
      expect(documented.get(code), code).toBe(status);
    }
  });

  it('lists no code the services do not have', () => {
    const edgeOnly = ['EGGMESH_UPSTREAM_UNAVAILABLE', 'EGGMESH_UPSTREAM_TIMEOUT', 'EGGMESH_BAD_REQUEST'];
    const known = new Set([...Object.keys(errorCatalogue), ...edgeOnly]);
    expect(rows.map(([code]) => code).filter((code) => !known.has(code))).toEqual([]);
  });
});
