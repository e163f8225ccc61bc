import { loadConfig, loggerOptions, serve } from '@eggmesh/service-kit';
import { buildApp } from './app.js';

const config = loadConfig();
const app = await buildApp({ config, logger: { ...loggerOptions(config, 'edge') } });
await serve(app, { port: config.ports.edge, config });
app.log.info({ upstreams: config.upstreams }, 'edge ready');
//# sourceMappingURL=server.js.map
