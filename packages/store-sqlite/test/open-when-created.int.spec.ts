import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { dataFiles, openPrimaryStore, openPrimaryWhenCreated } from '../src/index.js';

describe('openPrimaryWhenCreated (the projector and relay waiting for the write-api)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('waits while the file exists but its tables do not yet, then opens it read-only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-open-when-created-'));
    dirs.push(dir);
    const file = dataFiles(dir).primary;
    // What a reader can meet: the write-api created the file and has not yet created its tables.
    new Database(file).close();
    const said: string[] = [];
    let opened = false;
    const waiting = openPrimaryWhenCreated(dir, (m) => said.push(m)).then((store) => {
      opened = true;
      return store;
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(opened).toBe(false);
    expect(said).toHaveLength(1);
    const writer = openPrimaryStore({ file });
    const reader = await waiting;
    expect(await reader.log.head()).toBe(0);
    await reader.close();
    await writer.close();
  });
});
