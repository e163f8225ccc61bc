import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  commonServiceEnv,
  createMetrics,
  embed,
  loadConfig,
  loggerOptions,
  parseCommandLine,
  serve,
} from '@eggmesh/service-kit';
import type { SqliteReadStore } from '@eggmesh/store-sqlite';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';

parseCommandLine({
  command: 'node services/edge/dist/server.js',
  summary:
    'The single front door: /<entity>/api to the write-api; /<entity>/graph, /graphql and /graphiql to the\nread-api. On SQLite (EGGMESH_EDGE_GRAPHQL not proxy) it answers GraphQL and the REST reads (GET/HEAD of\n/<entity>/api) itself from the data files, read-only. `pnpm start` runs it under the supervisor.',
  env: [
    ...commonServiceEnv,
    'EDGE_PORT',
    'WRITE_API_PORT',
    'READ_API_PORT',
    'EGGMESH_WRITE_API_URL',
    'EGGMESH_READ_API_URL',
    'EGGMESH_LOG_REQUESTS',
    'EGGMESH_BODY_LIMIT_BYTES',
    'EGGMESH_EDGE_GRAPHQL',
    'EGGMESH_RATE_LIMIT_PER_MIN',
  ],
});
const config = loadConfig();

/** The read store for embedded GraphQL, once the write-api has created the data files (retried every 500 ms). */
async function openStore(log: (msg: string) => void): Promise<SqliteReadStore> {
  const { openReadStore } = await import('@eggmesh/store-sqlite');
  let told = '';
  for (;;) {
    try {
      return openReadStore(config.dataDir);
    } catch (error) {
      const reason = `waiting for the data files in ${config.dataDir} (${(error as Error).message})`;
      if (reason !== told) log(reason);
      told = reason;
      await sleep(500);
    }
  }
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;
// One registry for the process: the apps answering in process count into the edge's /metrics.
const metrics = createMetrics();
let read: Handler | undefined;
let restReads: Handler | undefined;
let closeRead: (() => Promise<void>) | undefined;
let readApi: FastifyInstance | undefined;
// Embedded GraphQL reads the SQLite files; on the scaled tier the edge forwards GraphQL to the read-api.
if (config.edgeGraphql !== 'proxy' && config.store === 'sqlite') {
  const store = await openStore((msg) =>
    process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), service: 'edge', msg })}\n`),
  );
  // Loaded only here: a proxying edge does not carry the read side's modules (about 30 MiB of RSS).
  const { buildApp: buildReadApp } = await import('@eggmesh/read-api');
  const readApp = buildReadApp({ config, store, metrics });
  // REST reads too: the write-api's read routes over the same read-only files. On SQLite a write is
  // acknowledged after its COMMIT, so the next read here sees it (read-your-writes holds without a hop).
  const { buildApp: buildRestApp } = await import('@eggmesh/write-api');
  const restApp = await buildRestApp({
    config,
    reader: store,
    logger: loggerOptions(config, 'edge'),
    metrics,
  });
  restReads = await embed(restApp, config);
  if (config.edgeGraphql === 'read-api') {
    // The read-api's app also listens on READ_API_PORT (serve() below, with the edge's own limits,
    // /health and shutdown): this process stands in for the read-api process.
    readApi = readApp;
    read = (request, response) => readApp.routing(request, response);
    closeRead = async () => {
      await restApp.close();
      store.close();
    };
  } else {
    // Served inside the edge's HTTP server with what serve() gives the read-api's own (see embed()).
    read = await embed(readApp, config);
    closeRead = async () => {
      await Promise.all([readApp.close(), restApp.close()]);
      store.close();
    };
  }
}
const app = await buildApp({
  config,
  logger: { ...loggerOptions(config, 'edge') },
  metrics,
  ...(read ? { read } : {}),
  ...(restReads ? { restReads } : {}),
});
await serve(app, {
  port: config.ports.edge,
  config,
  ...(closeRead ? { onClose: closeRead } : {}),
  ...(readApi ? { also: [{ app: readApi, port: config.ports.read }] } : {}),
});
app.log.info({ upstreams: config.upstreams, graphql: config.edgeGraphql }, 'edge ready');
