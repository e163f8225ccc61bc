import { Writable } from 'node:stream';
import { loggerOptions, parseConfig } from '@eggmesh/service-kit';
import { dataFiles, openPrimaryStore, ProjectionReader, SqliteReadStore } from '@eggmesh/store-sqlite';
import { buildApp } from '@eggmesh/write-api';
import { describe, expect, it } from 'vitest';
import { send, tempDir } from './helpers.js';

const farm = (i: number) => ({
  name: `Full Farm ${i} ${'x'.repeat(200)}`,
  farm_type: 'local_farm',
  zone: 'north',
  owner: 'Ann',
});

describe('a full disk (real SQLITE_FULL: the database held at its page count)', () => {
  it('answers writes 507 EGGMESH_STORAGE_FULL with retry-after, logs one line, is not ready until it has room, and recovers by itself', async () => {
    const dir = tempDir();
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const config = parseConfig({ EGGMESH_DATA_DIR: dir, EGGMESH_LOG_LEVEL: 'info' });
    const files = dataFiles(dir);
    const primary = openPrimaryStore({ file: files.primary });
    const reader = new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir));
    const app = await buildApp({
      config,
      primary,
      reader,
      logger: { ...loggerOptions(config, 'write-api'), stream },
    });
    try {
      expect((await send(app, 'POST', '/farm/api', farm(0))).statusCode).toBe(201);
      // The file may not grow past the pages it has: the next writes that need a page get SQLITE_FULL.
      primary.db.pragma(`max_page_count = ${primary.db.pragma('page_count', { simple: true })}`);
      let written = 0;
      let refused: Awaited<ReturnType<typeof send>> | undefined;
      for (let i = 1; i <= 500 && refused === undefined; i++) {
        const res = await send(app, 'POST', '/farm/api', farm(i));
        if (res.statusCode === 201) written += 1;
        else refused = res;
      }
      expect(refused?.statusCode).toBe(507);
      expect(refused?.headers['retry-after']).toBe('30');
      expect(refused?.json()).toEqual({
        code: 'EGGMESH_STORAGE_FULL',
        error: 'storage is full: nothing was written; retry after 30 s',
      });
      const head = await primary.log.head();
      expect(head).toBe(1 + written);
      for (let i = 0; i < 20; i++) {
        expect((await send(app, 'POST', '/farm/api', farm(1000 + i))).statusCode).toBe(507);
      }
      expect(await primary.log.head()).toBe(head);
      const ready = await send(app, 'GET', '/ready');
      expect(ready.statusCode).toBe(507);
      expect(ready.json().code).toBe('EGGMESH_STORAGE_FULL');
      expect((await send(app, 'GET', '/ready')).statusCode).toBe(507);
      const logged = lines.map((line) => JSON.parse(line) as { msg: string; stack?: string; err?: unknown });
      expect(logged.filter((l) => l.msg.startsWith('storage is full'))).toHaveLength(1);
      expect(logged.filter((l) => l.msg === 'unhandled error' || l.err !== undefined)).toEqual([]);

      // Room returns: /ready says so without waiting for a client's write, and writes succeed.
      primary.db.pragma('max_page_count = 1073741823');
      expect((await send(app, 'GET', '/ready')).statusCode).toBe(200);
      expect((await send(app, 'POST', '/farm/api', farm(2000))).statusCode).toBe(201);
      expect(await primary.log.head()).toBe(head + 1);
    } finally {
      await app.close();
      await reader.close();
    }
  });
});
