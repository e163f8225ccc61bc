/**
 * The data generator: writes a preset's egg economy straight into the primary store in large
 * transactions (`PrimaryStore.commit`), with a progress line. Ids and values are deterministic
 * (seeded PRNG); see data/dataset.ts.
 *
 *   node perf/dist/generate.js --preset small|medium|national [--seed 1] [--anchor YYYY-MM-DD]
 *                              [--out DIR] [--batch 20000] [--force]
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { WriteOperation } from '@eggmesh/store';
import { dataFiles, openDatabase, openPrimaryStore, PRIMARY_LAYOUT_VERSION } from '@eggmesh/store-sqlite';
import { Dataset, type DatasetCounts, utcMidnight } from './data/dataset.js';
import { isPresetName, type PresetName, presets } from './data/presets.js';
import { exists, workDir } from './lib/env.js';
import { formatInt, Progress } from './lib/progress.js';

/** Bump when the generated data changes shape, so cached datasets are rebuilt. */
export const GENERATOR_VERSION = 1;

export interface Manifest {
  readonly generatorVersion: number;
  /**
   * The primary file's storage layout (`PRAGMA user_version`) when generated. Informative: whether a
   * cached dataset is current is read from the file itself (`isCurrent`).
   */
  readonly primaryLayout?: number;
  readonly preset: PresetName;
  readonly seed: number;
  readonly anchorMs: number;
  readonly counts: DatasetCounts;
  /** Log head after loading. */
  readonly head: number;
  readonly seconds: number;
  readonly rowsPerSecond: number;
}

export interface GenerateOptions {
  readonly dataDir: string;
  readonly batchSize?: number;
  readonly quiet?: boolean;
}

/** The storage layout of a primary file (`PRAGMA user_version`), or null when there is no such file. */
export function primaryLayoutOf(file: string): number | null {
  if (!exists(file)) return null;
  const db = openDatabase(file, { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

/**
 * Whether `dataDir` holds a dataset this build can use as it is: written by this generator version,
 * and its primary file in the storage layout this build writes. The layout is what the write-api
 * itself checks when it opens a file (and migrates or refuses); a change to the storage code that
 * keeps the layout keeps the dataset, so an A/B of two builds of the store does not regenerate it.
 */
export function isCurrent(dataDir: string): boolean {
  const manifest = readManifest(dataDir);
  return (
    manifest !== null &&
    manifest.generatorVersion === GENERATOR_VERSION &&
    primaryLayoutOf(dataFiles(dataDir).primary) === PRIMARY_LAYOUT_VERSION
  );
}

export function defaultDatasetDir(preset: PresetName, seed: number): string {
  return join(workDir, 'datasets', `${preset}-s${seed}`);
}

export function readManifest(dataDir: string): Manifest | null {
  const file = join(dataDir, 'dataset.json');
  if (!exists(file)) return null;
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
}

/** Writes the dataset into a fresh data directory (whatever was there is removed). */
export async function generate(dataset: Dataset, options: GenerateOptions): Promise<Manifest> {
  const dataDir = resolve(options.dataDir);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const files = dataFiles(dataDir);
  const store = openPrimaryStore({ file: files.primary });
  const batchSize = options.batchSize ?? 20_000;
  const progress = new Progress(`${dataset.preset.name}`, dataset.counts.total);
  let done = 0;
  let head = 0;
  try {
    let batch: WriteOperation[] = [];
    for (const operation of dataset.operations()) {
      batch.push(operation);
      if (batch.length >= batchSize) {
        head = (await store.commit(batch)).position;
        done += batch.length;
        batch = [];
        if (!options.quiet) progress.update(done);
      }
    }
    if (batch.length > 0) {
      head = (await store.commit(batch)).position;
      done += batch.length;
    }
    if (!options.quiet) progress.update(done);
  } finally {
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    await store.close();
  }
  if (!options.quiet) progress.finish();
  const manifest: Manifest = {
    generatorVersion: GENERATOR_VERSION,
    primaryLayout: PRIMARY_LAYOUT_VERSION,
    preset: dataset.preset.name,
    seed: dataset.seed,
    anchorMs: dataset.anchorMs,
    counts: dataset.counts,
    head,
    seconds: progress.elapsedSec,
    rowsPerSecond: done / progress.elapsedSec,
  };
  writeFileSync(join(dataDir, 'dataset.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** The cached dataset for (preset, seed), generated when missing or stale. */
export async function ensureDataset(
  preset: PresetName,
  seed: number,
  options: { force?: boolean; anchorMs?: number; quiet?: boolean } = {},
): Promise<{ dataDir: string; manifest: Manifest; generated: boolean }> {
  const dataDir = defaultDatasetDir(preset, seed);
  const existing = readManifest(dataDir);
  if (!options.force && existing && isCurrent(dataDir)) {
    return { dataDir, manifest: existing, generated: false };
  }
  const dataset = new Dataset({ preset: presets[preset], seed, anchorMs: options.anchorMs ?? utcMidnight() });
  const manifest = await generate(dataset, { dataDir, ...(options.quiet ? { quiet: true } : {}) });
  return { dataDir, manifest, generated: true };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      preset: { type: 'string', default: 'small' },
      seed: { type: 'string', default: '1' },
      anchor: { type: 'string' },
      out: { type: 'string' },
      batch: { type: 'string', default: '20000' },
      force: { type: 'boolean', default: false },
    },
  });
  const preset = values.preset;
  if (!isPresetName(preset)) throw new Error(`--preset must be one of ${Object.keys(presets).join(', ')}`);
  const seed = Number.parseInt(values.seed, 10);
  const anchorMs = values.anchor ? Date.parse(`${values.anchor}T00:00:00Z`) : utcMidnight();
  if (!Number.isFinite(anchorMs)) throw new Error('--anchor must be YYYY-MM-DD');
  const dataDir = values.out ?? defaultDatasetDir(preset, seed);
  if (!values.force && !values.out && isCurrent(dataDir)) {
    console.log(`${dataDir} already holds ${preset} (seed ${seed}); --force to regenerate`);
    return;
  }
  const dataset = new Dataset({ preset: presets[preset], seed, anchorMs });
  console.log(
    `generating ${preset}: ${formatInt(dataset.counts.actors)} actors + ${formatInt(dataset.counts.events)} events into ${dataDir}`,
  );
  const manifest = await generate(dataset, { dataDir, batchSize: Number.parseInt(values.batch, 10) });
  console.log(
    `done: ${formatInt(manifest.head)} log entries in ${manifest.seconds.toFixed(1)} s (${formatInt(manifest.rowsPerSecond)} rows/s)`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
