import { type Config, closeConnectionsWhenClosing, requestLogging } from '@eggmesh/service-kit';
import replyFrom from '@fastify/reply-from';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { upstreamFor } from './routes.js';

export interface EdgeOptions {
  readonly config: Config;
  readonly logger?: FastifyServerOptions['logger'];
}

/**
 * One front door for MeshQL-style clients: `/<entity>/api` to the write-api, `/<entity>/graph`,
 * `/graphql` and `/graphiql` to the read-api. Bodies stream through untouched.
 */
export async function buildApp(options: EdgeOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: config.bodyLimitBytes,
    logController: requestLogging(config.logRequests),
  });
  await app.register(replyFrom, {
    undici: { connections: 128, pipelining: 1, keepAliveTimeout: 60_000 },
    disableRequestLogging: !config.logRequests,
  });
  closeConnectionsWhenClosing(app);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    const check = async (url: string) => {
      try {
        const response = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(2000) });
        return response.ok;
      } catch {
        return false;
      }
    };
    const [write, read] = await Promise.all([check(config.upstreams.write), check(config.upstreams.read)]);
    if (!write || !read) reply.code(503);
    return { status: write && read ? 'ready' : 'unavailable', write, read };
  });

  app.all('/*', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const upstream = upstreamFor(path);
    if (!upstream) {
      reply.code(404);
      return { error: `no route ${request.method} ${path}`, code: 'EGGMESH_ROUTE_NOT_FOUND' };
    }
    const base = upstream === 'write' ? config.upstreams.write : config.upstreams.read;
    return reply.from(`${base}${request.url}`, {
      onError: (res, { error }) => {
        res.code(502).send({
          error: `the ${upstream === 'write' ? 'write' : 'read'} service did not answer: ${error.message}`,
          code: 'EGGMESH_UPSTREAM_UNAVAILABLE',
        });
      },
    });
  });
  return app;
}
