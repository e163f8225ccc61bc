import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { dataFiles, openPrimaryStore, type SqlitePrimaryStore } from '@eggmesh/store-sqlite';

/** Opens the primary read-only, waiting (with one log line) until the write service has created it. */
export async function openLogSource(
  dataDir: string,
  say: (message: string) => void,
  signal?: AbortSignal,
): Promise<SqlitePrimaryStore> {
  const file = dataFiles(dataDir).primary;
  let told = false;
  while (!existsSync(file)) {
    if (!told) say(`waiting for ${file}: start the write-api first`);
    told = true;
    await sleep(500, undefined, signal ? { signal } : undefined);
  }
  return openPrimaryStore({ file, readonly: true });
}
