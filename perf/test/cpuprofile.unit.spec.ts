import { describe, expect, it } from 'vitest';
import { type CpuProfile, moduleOf, selfTimes, shortUrl, summarizeProfile } from '../src/lib/cpuprofile.js';

const root = '/work/main';
const frame = (functionName: string, url = '', lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
  columnNumber: 0,
});

// root → handler (read-api) → stringify (V8) ; root → (idle) ; root → (garbage collector)
const profile: CpuProfile = {
  startTime: 0,
  endTime: 10_000,
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4, 5] },
    { id: 2, callFrame: frame('handler', `file://${root}/services/read-api/dist/app.js`, 9), children: [3] },
    { id: 3, callFrame: frame('stringify') },
    { id: 4, callFrame: frame('(idle)') },
    { id: 5, callFrame: frame('(garbage collector)') },
    {
      id: 6,
      callFrame: frame(
        'runPreParsing',
        `file://${root}/node_modules/.pnpm/fastify@5.6.0/node_modules/fastify/lib/route.js`,
        99,
      ),
    },
  ],
  // Each sample lasts until the next one; the last one until endTime.
  samples: [2, 3, 3, 4, 5, 6],
  timeDeltas: [0, 1_000, 1_000, 1_000, 4_000, 1_000],
};

describe('selfTimes', () => {
  it('gives each sample the time until the next one, the last until endTime', () => {
    const self = selfTimes(profile);
    expect(self.get(2)).toBe(1_000);
    expect(self.get(3)).toBe(2_000);
    expect(self.get(4)).toBe(4_000);
    expect(self.get(5)).toBe(1_000);
    expect(self.get(6)).toBe(2_000);
  });

  it('counts only the samples taken from `fromUs` after the start', () => {
    const self = selfTimes(profile, 2_000);
    expect(self.get(2)).toBeUndefined();
    expect(self.get(3)).toBe(1_000);
    expect(self.get(4)).toBe(4_000);
    expect(self.get(6)).toBe(2_000);
    expect(summarizeProfile(profile, { fromMs: 2 }).totalMs).toBe(8);
  });

  it('falls back to hit counts without a sample list', () => {
    const self = selfTimes({
      startTime: 0,
      endTime: 4_000,
      nodes: [
        { id: 1, callFrame: frame('a'), hitCount: 3 },
        { id: 2, callFrame: frame('b'), hitCount: 1 },
      ],
    });
    expect(self.get(1)).toBe(3_000);
    expect(self.get(2)).toBe(1_000);
  });
});

describe('summarizeProfile', () => {
  const s = summarizeProfile(profile, { root, process: 'read-api' });

  it('sets idle apart and ranks functions by self time as a share of busy time', () => {
    expect(s.totalMs).toBe(10);
    expect(s.idleMs).toBe(4);
    expect(s.busyMs).toBe(6);
    expect(s.gcMs).toBe(1);
    expect(s.topFunctions[0]).toEqual({ name: 'stringify', selfMs: 2, busyPct: (2 / 6) * 100 });
    expect(s.topFunctions.map((e) => e.name)).toContain('handler (services/read-api/dist/app.js:10)');
    expect(s.topFunctions.map((e) => e.name)).toContain('runPreParsing (fastify/lib/route.js:100)');
    expect(s.topFunctions.map((e) => e.name)).not.toContain('(idle)');
  });

  it('groups by npm package, workspace folder and V8 builtins', () => {
    const modules = Object.fromEntries(s.topModules.map((e) => [e.name, e.selfMs]));
    expect(modules).toEqual({
      '(V8 builtins / native)': 2,
      fastify: 2,
      'services/read-api': 1,
      '(garbage collector)': 1,
    });
  });
});

describe('shortUrl and moduleOf', () => {
  it('shortens repo paths, node_modules paths and keeps node: internals', () => {
    expect(shortUrl(`file://${root}/packages/store-sqlite/dist/x.js`, root)).toBe(
      'packages/store-sqlite/dist/x.js',
    );
    expect(shortUrl('file:///x/node_modules/.pnpm/a@1/node_modules/@scope/p/i.js')).toBe('@scope/p/i.js');
    expect(moduleOf('file:///x/node_modules/.pnpm/a@1/node_modules/@scope/p/i.js', 'f')).toBe('@scope/p');
    expect(moduleOf('node:internal/streams/writable', 'write')).toBe('node internals');
    expect(moduleOf(`file://${root}/packages/store-sqlite/dist/x.js`, 'f', root)).toBe(
      'packages/store-sqlite',
    );
    expect(moduleOf('', '(program)')).toBe('(program)');
    expect(moduleOf(`file://${root}/perf/dist/baselines/bare-rest.js`, 'f', root)).toBe('perf/baselines');
  });
});
