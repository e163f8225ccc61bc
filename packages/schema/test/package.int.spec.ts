// The published shape of @eggmesh/schema: build as the root `build` script does, `pnpm pack`, install
// the tarball into a throwaway consumer project, and use it from ESM, CommonJS and TypeScript.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const pkgDir = join(root, 'packages/schema');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const TIMEOUT = 180_000;

const run = (file: string, args: string[], cwd: string, input?: string) =>
  execFileSync(file, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
    timeout: TIMEOUT,
    env: { ...process.env, npm_config_update_notifier: 'false' },
    ...(input === undefined ? {} : { input }),
  });
const node = (args: string[], cwd: string) => run(process.execPath, args, cwd);

/** pnpm from PATH, else the version the root package.json pins, through npx. */
function pnpm(): [string, string[]] {
  try {
    execFileSync('pnpm', ['--version'], { stdio: 'pipe' });
    return ['pnpm', []];
  } catch {
    const pinned = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { packageManager: string }
    ).packageManager;
    return ['npx', ['-y', pinned]];
  }
}

let work: string;
let consumer: string;
let tarball: string;
let files: string[];

beforeAll(() => {
  // The root `build` script's steps for this package: tsc -b (ESM + .d.ts), then the CJS build and its marker.
  node([tsc, '-b', 'packages/schema'], root);
  node([tsc, '-p', 'packages/schema/tsconfig.cjs.json'], root);
  node(['packages/schema/scripts/mark-cjs.mjs'], root);

  work = mkdtempSync(join(tmpdir(), 'eggmesh-schema-pack-'));
  const [cmd, pre] = pnpm();
  run(cmd, [...pre, 'pack', '--pack-destination', work], pkgDir);
  const tgz = readdirSync(work).filter((f) => f.endsWith('.tgz'));
  expect(tgz).toHaveLength(1);
  tarball = join(work, tgz[0]!);
  files = run('tar', ['-tzf', tarball], work)
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));

  consumer = join(work, 'consumer');
  mkdirSync(consumer);
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'eggmesh-schema-consumer', version: '1.0.0', private: true }, null, 2),
  );
  // zod is a peer: the consumer brings its own, from the registry, as any user would.
  run('npm', ['install', tarball, 'zod@^4.1.0', '--no-audit', '--no-fund', '--loglevel=error'], consumer);
}, TIMEOUT);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const validLayReport = {
  hen_id: '3f2b8c1e-9d4a-4b6e-8f1a-2c3d4e5f6a7b',
  coop_id: '7a6f5e4d-3c2b-4a19-8e7d-6c5b4a3f2e1d',
  farm_id: 'b1c2d3e4-f5a6-4b7c-9d8e-0f1a2b3c4d5e',
  eggs: 2,
  timestamp: '2026-02-20T06:30:00Z',
  quality: 'grade_a',
};
const invalidLayReport = { ...validLayReport, eggs: -1, colour: 'brown', timestamp: 'yesterday' };

/** What both module systems print: the same observable facts. */
const probe = (load: string) => `${load}
const out = {
  entities: Object.keys(s.entities).length,
  names: s.entityNames,
  relations: s.relations.length,
  kinds: s.entityNames.map((n) => s.entities[n].kind),
  valid: s.entities.lay_report.schema.safeParse(${JSON.stringify(validLayReport)}).success,
  issues: s.layReportSchema.safeParse(${JSON.stringify(invalidLayReport)}).error.issues.map((i) => i.path.join('.')).sort(),
  farm: s.farmSchema.parse({ name: 'F', farm_type: 'homestead', zone: 'north' }),
  jsonRequired: s.jsonSchemaOf('farm', 'input').required,
  isEntity: [s.isEntityName('hen'), s.isEntityName('chicken')],
  henRelations: s.relationsOf('hen').map((r) => r.field),
};
console.log(JSON.stringify(out));`;

const expected = {
  entities: 13,
  relations: 19,
  valid: true,
  issues: ['', 'eggs', 'timestamp'],
  farm: { name: 'F', farm_type: 'homestead', zone: 'north' },
  jsonRequired: ['name', 'farm_type', 'zone'],
  isEntity: [true, false],
  henRelations: ['coop', 'layReports', 'productivity'],
};

describe('@eggmesh/schema tarball', () => {
  it('holds the ESM and CJS builds with declarations, the sources their maps name, a LICENSE; no tests or build state', () => {
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/package.json',
      'src/index.ts',
    ]) {
      expect(files).toContain(f);
    }
    expect(
      files.filter((f) => f.startsWith('test/') || f.startsWith('scripts/') || f.includes('tsconfig')),
    ).toEqual([]);
    expect(files.filter((f) => f.endsWith('.tsbuildinfo'))).toEqual([]);
    expect(files.filter((f) => f.includes('.spec.'))).toEqual([]);
    const installed = join(consumer, 'node_modules/@eggmesh/schema');
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });

  it('ships no source map pointing at a file it does not ship', () => {
    const maps = files.filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    const installed = join(consumer, 'node_modules/@eggmesh/schema');
    const missing: string[] = [];
    for (const map of maps) {
      const { sources, sourceRoot } = JSON.parse(readFileSync(join(installed, map), 'utf8')) as {
        sources: string[];
        sourceRoot?: string;
      };
      for (const source of sources) {
        const path = posix.normalize(posix.join(posix.dirname(map), sourceRoot ?? '', source));
        if (!files.includes(path)) missing.push(`${map} → ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('declares zod as a peer (one zod in the consumer), a real repository, MIT', () => {
    const manifest = JSON.parse(
      readFileSync(join(consumer, 'node_modules/@eggmesh/schema/package.json'), 'utf8'),
    );
    expect(manifest.peerDependencies).toEqual({ zod: expect.stringMatching(/^\^4\./) });
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.license).toBe('MIT');
    expect(manifest.repository).toEqual({
      type: 'git',
      url: 'git+https://github.com/eggmesh/eggmesh.git',
      directory: 'packages/schema',
    });
    expect(manifest.files).toEqual(expect.arrayContaining(['dist', 'src', 'LICENSE']));
    // The consumer's own zod is the one the package uses: no nested copy.
    expect(existsSync(join(consumer, 'node_modules/@eggmesh/schema/node_modules/zod'))).toBe(false);
    expect(existsSync(join(consumer, 'node_modules/zod/package.json'))).toBe(true);
    expect(manifest.exports['.'].import.default).toBe('./dist/esm/index.js');
    expect(manifest.exports['.'].require.default).toBe('./dist/cjs/index.js');
    expect(
      JSON.parse(readFileSync(join(consumer, 'node_modules/@eggmesh/schema/dist/cjs/package.json'), 'utf8')),
    ).toEqual({ type: 'commonjs' });
  });

  it('imports from an ESM consumer', () => {
    const out = JSON.parse(
      node(['--input-type=module', '-e', probe("import * as s from '@eggmesh/schema';")], consumer),
    );
    expect(out).toMatchObject(expected);
    expect(out.names).toHaveLength(13);
    expect(out.kinds.filter((k: string) => k === 'projection')).toHaveLength(3);
  });

  it("mixes with the consumer's own zod schemas, in ESM and CommonJS", () => {
    const mix = `const farm = { name: 'F', farm_type: 'homestead', zone: 'north' };
const wrapped = z.object({ farm: s.farmSchema, reports: z.array(s.layReportSchema).max(2) });
console.log(JSON.stringify({
  parsed: wrapped.parse({ farm, reports: [] }),
  refused: wrapped.safeParse({ farm: { ...farm, farm_type: 'spaceship' }, reports: [] }).success,
  same: s.farmSchema instanceof z.ZodType,
}));`;
    const want = {
      parsed: { farm: { name: 'F', farm_type: 'homestead', zone: 'north' }, reports: [] },
      refused: false,
      same: true,
    };
    const esm = node(
      ['--input-type=module', '-e', `import { z } from 'zod'; import * as s from '@eggmesh/schema';\n${mix}`],
      consumer,
    );
    expect(JSON.parse(esm)).toEqual(want);
    const cjs = node(
      ['-e', `const { z } = require('zod'); const s = require('@eggmesh/schema');\n${mix}`],
      consumer,
    );
    expect(JSON.parse(cjs)).toEqual(want);
  });

  it('requires from a CommonJS consumer', () => {
    const out = JSON.parse(node(['-e', probe("const s = require('@eggmesh/schema');")], consumer));
    expect(out).toMatchObject(expected);
    // The require path really is the CommonJS build.
    const resolved = node(['-e', "console.log(require.resolve('@eggmesh/schema'))"], consumer).trim();
    expect(resolved).toMatch(/dist[\\/]cjs[\\/]index\.js$/);
  });

  it('gives ESM and CJS consumers the same catalogue', () => {
    const dump =
      'JSON.stringify({ names: s.entityNames, relations: s.relations, farm: s.jsonSchemaOf("farm") })';
    const esm = node(
      ['--input-type=module', '-e', `import * as s from '@eggmesh/schema'; console.log(${dump});`],
      consumer,
    );
    const cjs = node(['-e', `const s = require('@eggmesh/schema'); console.log(${dump});`], consumer);
    expect(esm).toBe(cjs);
  });

  it('exposes only its exports map', () => {
    const deep = () => node(['-e', "require('@eggmesh/schema/dist/cjs/catalogue.js')"], consumer);
    expect(deep).toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
    expect(node(['-e', "console.log(require('@eggmesh/schema/package.json').name)"], consumer).trim()).toBe(
      '@eggmesh/schema',
    );
  });

  it(
    'type-checks in TypeScript consumers of either module system',
    () => {
      const use = (load: string) => `${load}
const report: LayReport = { hen_id: 'h', coop_id: 'c', farm_id: 'f', eggs: 1, timestamp: 't' };
const name: EntityName = 'farm_output';
const parsed = layReportSchema.safeParse(report);
if (parsed.success) {
  const eggs: number = parsed.data.eggs;
  console.log(eggs, name, entities[name].kind, jsonSchemaOf(name).type);
}
// @ts-expect-error: not an entity
const wrong: EntityName = 'chicken';
export { wrong };
`;
      const imports =
        "{ entities, type EntityName, jsonSchemaOf, type LayReport, layReportSchema } from '@eggmesh/schema'";
      writeFileSync(join(consumer, 'esm.mts'), use(`import ${imports};`));
      writeFileSync(join(consumer, 'cjs.cts'), use(`import ${imports};`));
      writeFileSync(
        join(consumer, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2022',
            strict: true,
            noEmit: true,
            types: [],
          },
          files: ['esm.mts', 'cjs.cts'],
        }),
      );
      const traced = node([tsc, '-p', '.', '--traceResolution'], consumer);
      // Each file resolves to the declarations of its own build.
      expect(traced).toMatch(
        /'@eggmesh\/schema' was successfully resolved to '[^']*dist\/esm\/index\.d\.ts'/,
      );
      expect(traced).toMatch(
        /'@eggmesh\/schema' was successfully resolved to '[^']*dist\/cjs\/index\.d\.ts'/,
      );
    },
    TIMEOUT,
  );
});

describe('@eggmesh/schema tests', () => {
  it(
    'type-check (the expectTypeOf assertions of schemas.unit.spec.ts)',
    () => {
      expect(() => node([tsc, '-p', 'packages/schema/test'], root)).not.toThrow();
    },
    TIMEOUT,
  );
});
