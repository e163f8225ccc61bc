/**
 * The GraphQL ceiling: bare Mercurius with graphql-jit (`jit: 1`) over in-memory maps of the same
 * dataset, answering the same query shapes as the read-api: per-entity endpoints at
 * `/<entity>/graph` (getById, getAll, one filter) with farm → coops → hens and farmOutput relations,
 * and a unified `/graphql`. No store, no loaders, no `at`, no limits.
 *
 * Env: PORT, HOST, BARE_PRESET/BARE_SEED/BARE_ANCHOR (the dataset to serve; empty without),
 * BARE_EQUIPPED=1 (eggmesh's service plugin around the routes).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import mercurius, { type IResolvers } from 'mercurius';
import { equip, readBaselineEnv } from './baseline-env.js';
import {
  buildModel,
  type EndpointName,
  endpointSchema,
  endpoints,
  queryResolvers,
  typeResolvers,
  unifiedSchema,
} from './graphql-model.js';

const env = readBaselineEnv();
const model = buildModel(env.dataset);
const types = typeResolvers(model);

const app = Fastify({ logger: false });
await equip(app, env);
app.get('/health', async () => ({ status: 'ok' }));

async function mount(scope: FastifyInstance, path: string, schema: string, query: Record<string, unknown>) {
  await scope.register(mercurius, {
    schema,
    resolvers: { Query: query, ...types } as unknown as IResolvers,
    path,
    jit: 1,
    graphiql: false,
  });
}

for (const entity of Object.keys(endpoints) as EndpointName[]) {
  // Each endpoint in its own encapsulated scope: Mercurius decorates the instance it is registered on.
  await app.register(async (scope) =>
    mount(scope, `/${entity}/graph`, endpointSchema(entity), queryResolvers(model, entity)),
  );
}
await app.register(async (scope) => {
  const query = Object.assign(
    {},
    ...(Object.keys(endpoints) as EndpointName[]).map((entity) => queryResolvers(model, entity, true)),
  );
  await mount(scope, '/graphql', unifiedSchema(), query);
});

const shutdown = async (): Promise<void> => {
  await app.close();
  process.exit(0);
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

await app.listen({ host: env.host, port: env.port });
