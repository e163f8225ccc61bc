import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  runEventLogContract,
  runProjectionStoreContract,
  runReadStoreContract,
} from '@eggmesh/store/testing';
import {
  dataFiles,
  newGenerationName,
  openBulkProjectionStore,
  openPrimaryStore,
  openProjectionStore,
  openReadStore,
} from '@eggmesh/store-sqlite';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'eggmesh-ports-'));
  dirs.push(dir);
  return dir;
};
const cleanUp = async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
};

runEventLogContract('SQLite (the primary file, followed by a second read-only handle)', {
  async open() {
    const file = join(tempDir(), 'primary.db');
    const writer = openPrimaryStore({ file });
    // The consumer reads through its own read-only connection, like the projector process does.
    const reader = openPrimaryStore({ file, readonly: true });
    return {
      log: reader.log,
      writer,
      async dispose() {
        await reader.close();
        await writer.close();
        await cleanUp();
      },
    };
  },
});

runProjectionStoreContract('SQLite (a projection generation file)', {
  async open() {
    return openProjectionStore({ dir: tempDir() });
  },
  dispose: cleanUp,
});

runProjectionStoreContract('SQLite (a generation being bulk-built, as a rebuild writes it)', {
  async open() {
    return openBulkProjectionStore({ dir: tempDir(), generation: newGenerationName() });
  },
  dispose: cleanUp,
});

runReadStoreContract('SQLite (read-only handles on the primary and the current generation)', {
  async open() {
    const dir = tempDir();
    const files = dataFiles(dir);
    let now = 0;
    const primary = openPrimaryStore({ file: files.primary, clock: () => now });
    const projections = openProjectionStore({ dir: files.projectionsDir });
    return {
      read: openReadStore(dir),
      primary,
      projections,
      setTime(ms) {
        now = ms;
      },
      dispose: cleanUp,
    };
  },
});
