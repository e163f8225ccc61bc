import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { rebuildNodeFlags } from '../src/lib/rebuild.js';

describe('the rebuild the bench times', () => {
  it('runs with the node flags of `pnpm rebuild-projections`, each one a flag this node accepts', () => {
    const flags = rebuildNodeFlags();
    expect(flags.every((f) => f.startsWith('--'))).toBe(true);
    // An unknown or malformed flag makes node exit with "bad option" before running anything.
    expect(execFileSync(process.execPath, [...flags, '-p', '6 * 7'], { encoding: 'utf8' }).trim()).toBe('42');
  });
});
