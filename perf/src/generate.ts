/**
 * The data generator: writes a preset's egg economy straight into the primary store in large
 * transactions (`PrimaryStore.commit`), with a progress line. Ids and values are deterministic
 * (seeded PRNG); see data/dataset.ts.
 *
 *   node perf/dist/generate.js --preset small|medium|national [--seed 1] [--anchor YYYY-MM-DD]
 *                              [--out DIR] [--batch 20000] [--force]
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { WriteOperation } from '@eggmesh/store';
import { dataFiles, openPrimaryStore } from '@eggmesh/store-sqlite';
import { Dataset, type DatasetCounts, utcMidnight } from './data/dataset.js';
import { isPresetName, type PresetName, presets } from './data/presets.js';
import { exists, workDir } from './lib/env.js';
import { formatInt, Progress } from './lib/progress.js';

/** Bump when the generated data changes shape, so cached datasets are rebuilt. */
export const GENERATOR_VERSION = 1;

export interface Manifest {
  readonly generatorVersion: number;
  /** Hash of the SQLite adapter's build: a cached dataset is rebuilt when the storage code changes. */
  readonly storeFingerprint: string;
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

/** A hash of @eggmesh/store-sqlite's compiled JavaScript. */
export function storeFingerprint(): string {
  const dir = dirname(fileURLToPath(import.meta.resolve('@eggmesh/store-sqlite')));
  const hash = createHash('sha256');
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .sort()) {
    hash.update(file).update(readFileSync(join(dir, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

/** Whether a manifest describes a dataset of this generator version and this build of the SQLite adapter. */
export const isCurrent = (manifest: Manifest | null): manifest is Manifest =>
  manifest !== null &&
  manifest.generatorVersion === GENERATOR_VERSION &&
  manifest.storeFingerprint === storeFingerprint();

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
    storeFingerprint: storeFingerprint(),
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
  if (!options.force && isCurrent(existing)) {
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
  const existing = readManifest(dataDir);
  if (!values.force && !values.out && isCurrent(existing)) {
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
