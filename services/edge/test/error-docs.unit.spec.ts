import { readFileSync } from 'node:fs';
import { edgeErrors } from '@eggmesh/edge';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
const documented = new Map(
  [...doc.matchAll(/^\| `(EGGMESH_[A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])] as const),
);

describe('docs/api.md error table', () => {
  it('lists every edge error code with its status', () => {
    for (const [code, { status }] of Object.entries(edgeErrors))
      expect(documented.get(code), code).toBe(status);
  });
});
