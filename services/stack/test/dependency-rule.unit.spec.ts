import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The storage adapters: only `@eggmesh/backends` (packages/backends, the one registry) builds them; of
 * the services only the relay's entry names one, for the Kafka publisher that is the relay itself.
 */
const adapters = [
  '@eggmesh/store-sqlite',
  '@eggmesh/store-mongodb',
  '@eggmesh/log-kafka',
  '@eggmesh/backends',
];
/** Entry files allowed to import a storage adapter directly (not through the registry). */
const adapterImporters = new Set(['services/relay/src/main.ts']);

/** The process entry files (composition roots): they build the adapters and hand them on as ports. */
const compositionRoots = new Set([
  'services/write-api/src/server.ts',
  'services/read-api/src/server.ts',
  'services/projector/src/main.ts',
  'services/projector/src/rebuild.ts',
  'services/relay/src/main.ts',
  'services/stack/src/main.ts',
  'services/stack/src/seed.ts',
]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Module specifiers a file imports or re-exports (static and dynamic). */
function importsOf(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]!);
  return found;
}

const isAdapter = (specifier: string) =>
  adapters.some((a) => specifier === a || specifier.startsWith(`${a}/`));

/** Files under services/*\/src other than the composition roots that import an adapter package. */
export function adapterImportViolations(root: string): string[] {
  const services = join(root, 'services');
  const out: string[] = [];
  for (const service of readdirSync(services)) {
    let files: string[];
    try {
      files = sources(join(services, service, 'src'));
    } catch {
      continue;
    }
    for (const file of files) {
      const rel = relative(root, file).split('\\').join('/');
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        if (!isAdapter(specifier)) continue;
        // The registry: entry files only. An adapter itself: not even there, but for the relay's own.
        const allowed =
          specifier === '@eggmesh/backends' ? compositionRoots.has(rel) : adapterImporters.has(rel);
        if (!allowed) out.push(`${rel} imports ${specifier}`);
      }
    }
  }
  return out;
}

/** The package name of each service under services/ (its folder name: the name). */
function servicePackages(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const service of readdirSync(join(root, 'services'))) {
    try {
      const manifest = JSON.parse(readFileSync(join(root, 'services', service, 'package.json'), 'utf8')) as {
        name: string;
      };
      out.set(manifest.name, service);
    } catch {}
  }
  return out;
}

/**
 * Imports (in src/) and dependencies (package.json) by which one service reaches into another
 * service's package: what services share lives in packages/. (Tests may drive two services together.)
 */
export function crossServiceViolations(root: string): string[] {
  const packages = servicePackages(root);
  const out: string[] = [];
  for (const [own, service] of packages) {
    const foreign = (specifier: string) =>
      [...packages.keys()].some((p) => p !== own && (specifier === p || specifier.startsWith(`${p}/`)));
    const manifest = JSON.parse(readFileSync(join(root, 'services', service, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }))
      if (foreign(name)) out.push(`services/${service}/package.json depends on ${name}`);
    let files: string[] = [];
    try {
      files = sources(join(root, 'services', service, 'src'));
    } catch {}
    for (const file of files) {
      const rel = relative(root, file).split('\\').join('/');
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        if (foreign(specifier)) out.push(`${rel} imports ${specifier}`);
        // A relative path into another service's folder is the same dependency, unnamed.
        const into = /^(?:\.\.\/)+services\/([^/]+)\/|^\.\.\/\.\.\/([^/]+)\/(?:src|test)\//.exec(specifier);
        const target = into?.[1] ?? into?.[2];
        if (target && target !== service && [...packages.values()].includes(target))
          out.push(`${rel} imports ${specifier}`);
      }
    }
  }
  return out;
}

describe('dependency rule: no service imports another service', () => {
  it("no service's sources or package.json name another service's package", () => {
    expect(crossServiceViolations(repo)).toEqual([]);
  });

  it('knows every service, and finds such a dependency (the check itself works)', () => {
    const names = [...servicePackages(repo).keys()];
    expect(names).toEqual(expect.arrayContaining(['@eggmesh/write-api', '@eggmesh/read-api']));
    expect(names).not.toContain('@eggmesh/rest');
    const root = mkdtempSync(join(tmpdir(), 'eggmesh-rule-'));
    try {
      const service = (name: string, deps: Record<string, string>, source: string) => {
        mkdirSync(join(root, 'services', name, 'src'), { recursive: true });
        writeFileSync(
          join(root, 'services', name, 'package.json'),
          JSON.stringify({ name: `@x/${name}`, dependencies: deps }),
        );
        writeFileSync(join(root, 'services', name, 'src', 'index.ts'), source);
      };
      service('front', { '@x/back': 'workspace:*' }, "import { app } from '@x/back';\n");
      service('back', {}, "import { y } from '../../front/src/y.js';\n");
      expect(crossServiceViolations(root).sort()).toEqual([
        'services/back/src/index.ts imports ../../front/src/y.js',
        'services/front/package.json depends on @x/back',
        'services/front/src/index.ts imports @x/back',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('dependency rule: adapters are built in composition roots only', () => {
  it('services open their adapters through the backend registry, in their entry files only', () => {
    expect(adapterImportViolations(repo)).toEqual([]);
  });

  it('finds such an import (the check itself works)', () => {
    expect(
      importsOf("import { x } from '@eggmesh/store-sqlite';\nexport * from '@eggmesh/log-kafka/relay';"),
    ).toEqual(['@eggmesh/store-sqlite', '@eggmesh/log-kafka/relay']);
    expect(importsOf("const m = await import('@eggmesh/store-mongodb');").filter(isAdapter)).toEqual([
      '@eggmesh/store-mongodb',
    ]);
    expect(
      importsOf("import type { SqliteReadStore } from '@eggmesh/store-sqlite';").filter(isAdapter),
    ).toHaveLength(1);
    expect(importsOf("import { Projector } from '@eggmesh/store';").filter(isAdapter)).toEqual([]);
  });

  it('names entry files that exist', () => {
    for (const file of compositionRoots) expect(() => readFileSync(join(repo, file)), file).not.toThrow();
  });
});
