import { METHODS } from 'node:http';
import { Transform } from 'node:stream';
import { closeConnectionsWhenClosing, requestLogging } from '@eggmesh/service-kit';
import replyFrom from '@fastify/reply-from';
import Fastify, {} from 'fastify';
import { EdgeError } from './errors.js';
import { upstreamFor } from './routes.js';

const SERVICE = { write: 'write-api', read: 'read-api' };
/**
 * Headers that describe one connection, not the request (RFC 9110 §7.6.1), so a proxy must not pass
 * them on; undici also refuses several of them (`expect`, `upgrade`, `keep-alive`), which used to turn
 * a client's `Expect: 100-continue` into a 502. Node's server already answered `100 Continue`.
 */
const HOP_BY_HOP = [
  'connection',
  'expect',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
];
/** Passes a body through, failing with 413 once it grows past `limit` bytes (for bodies sent without a length). */
class BodyLimit extends Transform {
  limit;
  seen = 0;
  constructor(limit) {
    super();
    this.limit = limit;
  }
  _transform(chunk, _encoding, callback) {
    this.seen += chunk.length;
    if (this.seen > this.limit) callback(tooLarge(this.limit));
    else callback(null, chunk);
  }
}
const tooLarge = (limit) =>
  new EdgeError(
    'EGGMESH_BODY_TOO_LARGE',
    `the body is larger than ${limit} bytes (EGGMESH_BODY_LIMIT_BYTES)`,
  );
/** The client closed its connection before the whole request arrived. */
const clientGone = (request) => !request.raw.complete && (request.raw.destroyed || request.socket.destroyed);
function sendError(reply, error) {
  // The rest of a refused upload would otherwise have to be read before the connection can be reused.
  if (error.statusCode === 413) reply.header('connection', 'close');
  reply.code(error.statusCode).send(error.toBody());
}
/**
 * One front door for MeshQL-style clients: `/<entity>/api` to the write-api, `/<entity>/graph`,
 * `/graphql` and `/graphiql` to the read-api. Bodies stream through untouched, up to the body limit.
 * It answers 4xx for what the client got wrong (malformed request, body too large, upload abandoned)
 * and 502/504 only for a service that did not answer; its error bodies name the service, never its
 * address (the log has that).
 */
export async function buildApp(options) {
  const { config } = options;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: config.bodyLimitBytes,
    logController: requestLogging(config.logRequests),
    // Requests Fastify refuses before routing (a malformed URL): 400 in the edge's own shape.
    frameworkErrors: (error, _request, reply) => {
      // (Written on the raw response: Fastify types this reply for any route, so send() takes nothing.)
      const refused = new EdgeError('EGGMESH_BAD_REQUEST', `bad request: ${error.message}`);
      const body = JSON.stringify(refused.toBody());
      reply.raw.writeHead(refused.statusCode, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      });
      reply.raw.end(body);
    },
  });
  await app.register(replyFrom, {
    undici: {
      connections: 128,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      // A service that has not answered within the client's own request budget will not: 504.
      headersTimeout: config.http.requestTimeoutMs,
      bodyTimeout: config.http.requestTimeoutMs,
    },
    disableRequestLogging: !config.logRequests,
  });
  closeConnectionsWhenClosing(app);
  // Every method Node parses is proxied, so the service behind answers an unexpected one (PROPFIND…)
  // with its own 405 and Allow header.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method))
      app.addHttpMethod(method, { hasBody: true });
  }
  // Fastify refuses a QUERY without Content-Type before any route runs (RFC 10008); that rule is for the
  // service that serves QUERY, and none of ours does: mark the body opaque so it reaches the service,
  // whose answer (405 with Allow) is the one the client gets.
  app.addHook('onRequest', async (request) => {
    if (request.method === 'QUERY' && request.headers['content-type'] === undefined) {
      request.raw.headers['content-type'] = 'application/octet-stream';
    }
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    const length = request.headers['content-length'];
    if (length !== undefined) {
      // Node's parser stops a body at its declared length, so only the declaration needs checking.
      if (Number(length) > config.bodyLimitBytes) done(tooLarge(config.bodyLimitBytes), undefined);
      else done(null, payload);
      return;
    }
    done(null, payload.pipe(new BodyLimit(config.bodyLimitBytes)));
  });
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof EdgeError) return sendError(reply, error);
    const status = error.statusCode ?? 500;
    if (status === 413) return sendError(reply, tooLarge(config.bodyLimitBytes));
    if (status >= 400 && status < 500) {
      return sendError(reply, new EdgeError('EGGMESH_BAD_REQUEST', `bad request: ${error.message}`));
    }
    request.log.error({ err: error }, 'request failed');
    return sendError(reply, new EdgeError('EGGMESH_INTERNAL'));
  });
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    const check = async (url) => {
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
      return sendError(reply, new EdgeError('EGGMESH_ROUTE_NOT_FOUND', `no route ${request.method} ${path}`));
    }
    const base = upstream === 'write' ? config.upstreams.write : config.upstreams.read;
    const service = SERVICE[upstream];
    return reply.from(`${base}${request.url}`, {
      rewriteRequestHeaders: (_request, headers) => {
        for (const name of HOP_BY_HOP) delete headers[name];
        return headers;
      },
      // Likewise on the way back: the service's keep-alive terms are not the client's.
      rewriteHeaders: (headers) => {
        for (const name of HOP_BY_HOP) delete headers[name];
        return headers;
      },
      onError: (res, { error }) => {
        const cause = error.cause ?? error;
        if (cause instanceof EdgeError) return sendError(res, cause);
        if (clientGone(request)) {
          request.log.info('the client closed the connection before its request was complete');
          return sendError(
            res,
            new EdgeError(
              'EGGMESH_BAD_REQUEST',
              'the client closed the connection before its request was complete',
            ),
          );
        }
        const timedOut = 'statusCode' in error && error.statusCode === 504;
        request.log.warn(
          { err: cause, service, upstream: base },
          timedOut ? `${service} did not answer in time` : `${service} did not answer`,
        );
        return sendError(
          res,
          timedOut
            ? new EdgeError('EGGMESH_UPSTREAM_TIMEOUT', `the ${service} did not answer in time`)
            : new EdgeError('EGGMESH_UPSTREAM_UNAVAILABLE', `the ${service} did not answer`),
        );
      },
    });
  });
  return app;
}
//# sourceMappingURL=app.js.map
