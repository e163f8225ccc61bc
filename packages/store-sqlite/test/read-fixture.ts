import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  dataFiles,
  openPrimaryStore,
  openProjectionStore,
  openReadStore,
  type SqlitePrimaryStore,
  type SqliteProjectionStore,
  type SqliteReadStore,
} from '@eggmesh/store-sqlite';

export const farm = (name: string) => ({ name, farm_type: 'local', zone: 'north' });
export const coop = (farmId: string, name = 'c') => ({
  name,
  farm_id: farmId,
  capacity: 10,
  coop_type: 'barn',
});

/** A temp data dir with a writable primary (on `clock`), a projection generation, and a read store on both. */
export interface ReadFixture {
  readonly dir: string;
  readonly writer: SqlitePrimaryStore;
  readonly projections: SqliteProjectionStore;
  readonly read: SqliteReadStore;
  close(): Promise<void>;
}

export function openReadFixture(prefix: string, clock: () => number): ReadFixture {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const files = dataFiles(dir);
  const writer = openPrimaryStore({ file: files.primary, clock });
  const projections = openProjectionStore({ dir: files.projectionsDir });
  const read = openReadStore(dir);
  return {
    dir,
    writer,
    projections,
    read,
    async close() {
      await read.close();
      await projections.close();
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
