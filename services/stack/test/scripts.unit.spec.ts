import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const scripts = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

describe('root scripts', () => {
  it('build compiles every project in build mode, so a build with nothing changed does nothing', () => {
    const build = scripts.build ?? '';
    // `tsc -p` re-checks the whole project every time; `tsc -b` skips a project whose outputs are current.
    expect(build).not.toMatch(/tsc -p\b/);
    const tscRuns = build.split('&&').filter((step) => /\btsc\b/.test(step));
    expect(tscRuns).toHaveLength(1);
    expect(tscRuns[0]).toMatch(/^\s*tsc -b tsconfig\.json packages\/schema\/tsconfig\.cjs\.json\s*$/);
  });

  it('start runs exactly the build, then the supervisor (no nested package-manager run, no node flags)', () => {
    expect(scripts.start).toBe(`${scripts.build} && node services/stack/dist/main.js`);
    expect(scripts['start:scaled']).toBe(`${scripts.start} --scaled`);
    expect(scripts['start:legacy']).toBe(`${scripts.start} --legacy`);
  });

  it('clean removes what build makes', () => {
    expect(scripts.clean).toBe(
      'tsc -b --clean tsconfig.json packages/schema/tsconfig.cjs.json && rm -rf apps/dashboard/dist apps/homestead/dist apps/corporate/dist',
    );
  });
});
