import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataFiles, openDatabase, PRIMARY_LAYOUT_VERSION } from '@eggmesh/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dataset } from '../src/data/dataset.js';
import { presets } from '../src/data/presets.js';
import { GENERATOR_VERSION, generate, isCurrent, primaryLayoutOf, readManifest } from '../src/generate.js';

// A cached dataset is reused while its primary file is in the layout this build writes, whatever
// else changed in the storage code (an A/B of two store builds must not regenerate national).
describe('cached datasets', () => {
  let dir: string;
  let dataDir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eggmesh-dataset-cache-'));
    dataDir = join(dir, 'tiny-s3');
    const dataset = new Dataset({ preset: presets.tiny, seed: 3, anchorMs: Date.UTC(2026, 0, 1) });
    await generate(dataset, { dataDir, quiet: true });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const setLayout = (version: number) => {
    const db = openDatabase(dataFiles(dataDir).primary);
    db.pragma(`user_version = ${version}`);
    db.close();
  };

  it('a freshly generated dataset is current and records its layout', () => {
    expect(primaryLayoutOf(dataFiles(dataDir).primary)).toBe(PRIMARY_LAYOUT_VERSION);
    expect(readManifest(dataDir)?.primaryLayout).toBe(PRIMARY_LAYOUT_VERSION);
    expect(isCurrent(dataDir)).toBe(true);
  });

  it('a manifest from before the layout field is judged by its file', () => {
    const file = join(dataDir, 'dataset.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const { primaryLayout: _, ...older } = manifest;
    writeFileSync(file, JSON.stringify({ ...older, storeFingerprint: 'a build long gone' }));
    try {
      expect(isCurrent(dataDir)).toBe(true);
    } finally {
      writeFileSync(file, JSON.stringify(manifest));
    }
  });

  it('a file in another layout is not current', () => {
    setLayout(PRIMARY_LAYOUT_VERSION - 1);
    try {
      expect(isCurrent(dataDir)).toBe(false);
    } finally {
      setLayout(PRIMARY_LAYOUT_VERSION);
    }
    expect(isCurrent(dataDir)).toBe(true);
  });

  it('another generator version, or no primary file, is not current', () => {
    const file = join(dataDir, 'dataset.json');
    const manifest = readFileSync(file, 'utf8');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(manifest), generatorVersion: GENERATOR_VERSION + 1 }));
    expect(isCurrent(dataDir)).toBe(false);
    writeFileSync(file, manifest);
    expect(isCurrent(dataDir)).toBe(true);
    expect(isCurrent(join(dir, 'nothing-here'))).toBe(false);
    rmSync(dataFiles(dataDir).primary);
    expect(isCurrent(dataDir)).toBe(false);
  });
});
