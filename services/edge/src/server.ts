import { commonServiceEnv, loadConfig, loggerOptions, parseCommandLine, serve } from '@eggmesh/service-kit';
import { buildApp } from './app.js';

parseCommandLine({
  command: 'node services/edge/dist/server.js',
  summary:
    'The single front door: /<entity>/api to the write-api; /<entity>/graph, /graphql and /graphiql to the\nread-api. `pnpm start` runs it under the supervisor.',
  env: [
    ...commonServiceEnv,
    'EDGE_PORT',
    'WRITE_API_PORT',
    'READ_API_PORT',
    'EGGMESH_WRITE_API_URL',
    'EGGMESH_READ_API_URL',
    'EGGMESH_LOG_REQUESTS',
    'EGGMESH_BODY_LIMIT_BYTES',
  ],
});
const config = loadConfig();
const app = await buildApp({ config, logger: { ...loggerOptions(config, 'edge') } });
await serve(app, { port: config.ports.edge, config });
app.log.info({ upstreams: config.upstreams }, 'edge ready');
