import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The storage adapters: only composition roots may construct them. */
const adapters = ['@eggmesh/store-sqlite', '@eggmesh/store-mongodb', '@eggmesh/log-kafka'];

/** The process entry files (composition roots): they build the adapters and hand them on as ports. */
const compositionRoots = new Set([
  'services/write-api/src/server.ts',
  'services/read-api/src/server.ts',
  'services/projector/src/main.ts',
  'services/projector/src/rebuild.ts',
  'services/relay/src/main.ts',
  'services/stack/src/main.ts',
  'services/stack/src/seed.ts',
  'services/edge/src/server.ts',
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
      if (compositionRoots.has(rel)) continue;
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        if (isAdapter(specifier)) out.push(`${rel} imports ${specifier}`);
      }
    }
  }
  return out;
}

describe('dependency rule: adapters are built in composition roots only', () => {
  it('no service module other than the entry files imports a storage adapter', () => {
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
