/**
 * The REST ceiling: bare Fastify + better-sqlite3, one table per entity (id, JSON body), prepared
 * statements, WAL, synchronous=NORMAL; no validation, no versions, no event log, no request log.
 * Same paths and status codes as the write-api for the entities it serves.
 *
 * Env: PORT, HOST, BARE_DB (file), BARE_ENTITIES (comma list, default farm),
 * BARE_PRESET/BARE_SEED/BARE_ANCHOR (preload the dataset's rows of those entities), BARE_EQUIPPED=1
 * (eggmesh's service plugin around the routes).
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import type { Dataset, Row } from '../data/dataset.js';
import { equip, readBaselineEnv } from './baseline-env.js';

type Body = Record<string, unknown>;

const env = readBaselineEnv();
const file = process.env.BARE_DB ?? ':memory:';
const entities = (process.env.BARE_ENTITIES ?? 'farm')
  .split(',')
  .map((e) => e.trim())
  .filter(Boolean);
for (const entity of entities) {
  if (!/^[a-z_]+$/.test(entity)) throw new Error(`bad entity name ${entity}`);
}

if (file !== ':memory:') {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');

const app = Fastify({ logger: false });
await equip(app, env);
app.get('/health', async () => ({ status: 'ok' }));

for (const entity of entities) {
  const table = `t_${entity}`;
  db.exec(`CREATE TABLE ${table} (id TEXT PRIMARY KEY, body TEXT NOT NULL)`);
  const insert = db.prepare<[string, string]>(`INSERT INTO ${table} (id, body) VALUES (?, ?)`);
  const select = db.prepare<[string], { body: string }>(`SELECT body FROM ${table} WHERE id = ?`);
  const selectAll = db.prepare<[], { id: string; body: string }>(`SELECT id, body FROM ${table} ORDER BY id`);
  const update = db.prepare<[string, string]>(`UPDATE ${table} SET body = ? WHERE id = ?`);
  const remove = db.prepare<[string]>(`DELETE FROM ${table} WHERE id = ?`);

  if (env.dataset) preload(env.dataset, entity, insert);

  app.post<{ Body: Body }>(`/${entity}/api`, async (request, reply) => {
    const { id: given, ...payload } = request.body;
    const id = typeof given === 'string' ? given : randomUUID();
    try {
      insert.run(id, JSON.stringify(payload));
    } catch {
      return reply.code(409).send({ error: `${entity} ${id} already exists`, code: 'CONFLICT' });
    }
    return reply.code(201).send({ ...payload, id });
  });

  app.get(`/${entity}/api`, async () =>
    selectAll.all().map((row) => ({ ...JSON.parse(row.body), id: row.id })),
  );

  app.get<{ Params: { id: string } }>(`/${entity}/api/:id`, async (request, reply) => {
    const row = select.get(request.params.id);
    if (!row) return reply.code(404).send({ error: 'not found', code: 'NOT_FOUND' });
    return { ...JSON.parse(row.body), id: request.params.id };
  });

  app.put<{ Params: { id: string }; Body: Body }>(`/${entity}/api/:id`, async (request, reply) => {
    const { id: _ignored, ...payload } = request.body;
    const { id } = request.params;
    if (update.run(JSON.stringify(payload), id).changes === 0) {
      return reply.code(404).send({ error: 'not found', code: 'NOT_FOUND' });
    }
    return { ...payload, id };
  });

  app.delete<{ Params: { id: string } }>(`/${entity}/api/:id`, async (request, reply) => {
    const { id } = request.params;
    if (remove.run(id).changes === 0) return reply.code(404).send({ error: 'not found', code: 'NOT_FOUND' });
    return { id, status: 'deleted' };
  });
}

function preload(dataset: Dataset, entity: string, insert: Database.Statement<[string, string]>): void {
  const make: Partial<Record<string, (i: number) => Row>> = {
    farm: (i) => dataset.farm(i),
    coop: (i) => dataset.coop(i),
    hen: (i) => dataset.hen(i),
    container: (i) => dataset.container(i),
    consumer: (i) => dataset.consumer(i),
  };
  const rowOf = make[entity];
  if (!rowOf) return;
  const count = dataset.counts[entity as keyof typeof dataset.counts];
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const row = rowOf(i);
      insert.run(row.id, JSON.stringify(row.payload));
    }
  })();
}

const shutdown = async (): Promise<void> => {
  await app.close();
  db.close();
  process.exit(0);
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

await app.listen({ host: env.host, port: env.port });
