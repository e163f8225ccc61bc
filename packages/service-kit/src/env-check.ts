import { settings } from './config.js';

/** EGGMESH_* variables read by tools rather than by the services (`pnpm fuzz`); not typos. */
export const toolEnvNames = [
  'EGGMESH_FUZZ_MAX_EXAMPLES',
  'EGGMESH_FUZZ_SEED',
  'EGGMESH_FUZZ_DEADLINE_S',
  'EGGMESH_FUZZ_GRAPHQL',
  'EGGMESH_FUZZ_REST',
] as const;

/**
 * Every EGGMESH_* (and *_PORT) name some eggmesh process reads. A function, not a constant: config.ts
 * imports this module, so `settings` is only there once both have loaded.
 */
export const knownEnvNames = (): readonly string[] => [...Object.keys(settings), ...toolEnvNames];

/** Edit distance (insertions, deletions, substitutions, adjacent swaps count 1 each). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (d[(i - 1) * cols + j] ?? 0) + 1,
        (d[i * cols + j - 1] ?? 0) + 1,
        (d[(i - 1) * cols + j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (d[(i - 2) * cols + j - 2] ?? 0) + 1);
      }
      d[i * cols + j] = best;
    }
  }
  return d[rows * cols - 1] ?? 0;
}

/** The known name closest to `name` (ties: the first in `known`). */
export function closestName(name: string, known: readonly string[] = knownEnvNames()): string {
  let best = known[0] ?? '';
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * One warning per EGGMESH_* variable in `env` that no eggmesh process reads (most likely a typo, which
 * would otherwise be ignored without a word), naming the closest known variable. Sorted by name.
 */
export function unknownEnvWarnings(
  env: Record<string, string | undefined>,
  known: readonly string[] = knownEnvNames(),
): string[] {
  const knownSet = new Set(known);
  return Object.keys(env)
    .filter((name) => name.startsWith('EGGMESH_') && !knownSet.has(name))
    .sort()
    .map(
      (name) =>
        `warning: ${name} is not an eggmesh setting and is ignored; did you mean ${closestName(name, known)}? (every setting: docs/configuration.md)`,
    );
}

/** `env` without the EGGMESH_* names no eggmesh process reads (what a supervisor passes on to its services). */
export function withoutUnknownEnv(
  env: Record<string, string | undefined>,
  known: readonly string[] = knownEnvNames(),
): Record<string, string | undefined> {
  const knownSet = new Set(known);
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !name.startsWith('EGGMESH_') || knownSet.has(name)),
  );
}
