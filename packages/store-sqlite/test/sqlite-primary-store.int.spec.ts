import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPrimaryStoreContract } from '@eggmesh/store/testing';
import { openPrimaryStore } from '@eggmesh/store-sqlite';

const dirs: string[] = [];

runPrimaryStoreContract('SQLite (file, WAL)', {
  async open(clock) {
    const dir = mkdtempSync(join(tmpdir(), 'eggmesh-contract-'));
    dirs.push(dir);
    return openPrimaryStore({ file: join(dir, 'primary.db'), clock });
  },
  async dispose() {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  },
});
