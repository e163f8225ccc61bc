// Commit loop of the MongoDB adapter on the test server vs the SQLite adapter, same machine, same run.
// Needs a build first: `pnpm run build && node packages/store-mongodb/scripts/bench.mjs [commits]`.
// Figures are mongo-java-server figures (an in-process Java map behind the wire protocol), not MongoDB's.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverName, start } from '../../../infra/mongodb/server.mjs';
import { openPrimaryStore } from '../../store-sqlite/dist/index.js';
import { openMongoPrimaryStore } from '../dist/index.js';

const commits = Number(process.argv[2] ?? 1000);
const farm = (i) => ({ name: `farm ${i}`, farm_type: 'local_farm', zone: 'north' });

async function loop(store) {
  const ids = [];
  for (let i = 0; i < 50; i++)
    await store.commit([{ op: 'create', entity: 'farm', id: randomUUID(), payload: farm(i) }]);
  let t = performance.now();
  for (let i = 0; i < commits; i++) {
    const id = randomUUID();
    ids.push(id);
    await store.commit([{ op: 'create', entity: 'farm', id, payload: farm(i) }]);
  }
  const createsPerS = commits / ((performance.now() - t) / 1000);
  t = performance.now();
  for (const id of ids) await store.get('farm', id);
  const getsPerS = ids.length / ((performance.now() - t) / 1000);
  t = performance.now();
  const bulk = 10;
  for (let b = 0; b < bulk; b++) {
    await store.commit(
      Array.from({ length: 100 }, (_, i) => ({
        op: 'create',
        entity: 'farm',
        id: randomUUID(),
        payload: farm(i),
      })),
    );
  }
  const bulkRowsPerS = (bulk * 100) / ((performance.now() - t) / 1000);
  return { createsPerS, getsPerS, bulkRowsPerS };
}

const dir = mkdtempSync(join(tmpdir(), 'eggmesh-bench-'));
const sqlite = openPrimaryStore({ file: join(dir, 'primary.db') });
const s = await loop(sqlite);
await sqlite.close();

const server = await start();
const mongo = await openMongoPrimaryStore({ uri: server.uri, dbName: 'bench' });
const m = await loop(mongo);
await mongo.close();
await server.stop();
const fileServer = await start({ dataDir: join(dir, 'mongo') });
const durable = await openMongoPrimaryStore({ uri: fileServer.uri, dbName: 'bench' });
const f = await loop(durable);
await durable.close();
await fileServer.stop();
rmSync(dir, { recursive: true, force: true });

const row = (name, r) =>
  `${name.padEnd(44)} ${r.createsPerS.toFixed(0).padStart(8)} ${r.getsPerS.toFixed(0).padStart(8)} ${r.bulkRowsPerS.toFixed(0).padStart(9)}`;
console.log(`${commits} single-create commits, then ${commits} gets, then 10 bulk commits of 100`);
console.log(
  `${'adapter'.padEnd(44)} ${'commit/s'.padStart(8)} ${'get/s'.padStart(8)} ${'bulk row/s'.padStart(9)}`,
);
console.log(row('SQLite (file, WAL, synchronous=normal)', s));
console.log(row(`MongoDB adapter on ${serverName} (memory)`, m));
console.log(row(`MongoDB adapter on ${serverName} (h2 file)`, f));
console.log(
  `ratio mongo(memory)/sqlite: commits ${(m.createsPerS / s.createsPerS).toFixed(3)}, gets ${(m.getsPerS / s.getsPerS).toFixed(3)}, bulk ${(m.bulkRowsPerS / s.bulkRowsPerS).toFixed(3)}`,
);
console.log(`server start: memory ${server.startMs.toFixed(0)} ms, file ${fileServer.startMs.toFixed(0)} ms`);
