import { type Config } from '@eggmesh/service-kit';
import { type FastifyInstance, type FastifyServerOptions } from 'fastify';
export interface EdgeOptions {
  readonly config: Config;
  readonly logger?: FastifyServerOptions['logger'];
}
/**
 * One front door for MeshQL-style clients: `/<entity>/api` to the write-api, `/<entity>/graph`,
 * `/graphql` and `/graphiql` to the read-api. Bodies stream through untouched, up to the body limit.
 * It answers 4xx for what the client got wrong (malformed request, body too large, upload abandoned)
 * and 502/504 only for a service that did not answer; its error bodies name the service, never its
 * address (the log has that).
 */
export declare function buildApp(options: EdgeOptions): Promise<FastifyInstance>;
//# sourceMappingURL=app.d.ts.map
