import type { IncomingHttpHeaders } from 'node:http';
import { READ_METHODS, writeRoutes } from '@eggmesh/rest';
import { type ConfigOf, EggmeshError } from '@eggmesh/service-kit';
import replyFrom from '@fastify/reply-from';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Connections kept open to the write-api; more requests at once wait in the pool's queue. The
 * write-api is one process with one writer: more connections would only queue there instead.
 */
const WRITE_API_CONNECTIONS = 64;

/**
 * Headers that describe one connection, not the request or its answer (RFC 9110 §7.6.1): a proxy
 * does not pass them on, nor the ones a `Connection` header names. (undici refuses some of them.)
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'http2-settings',
]);

function endToEnd<H extends IncomingHttpHeaders | Record<string, unknown>>(headers: H): H {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers))
    if (!HOP_BY_HOP.has(name) && !named.includes(name)) out[name] = value;
  return out as H;
}

/** The request's headers for the write-api, the client's address appended to `x-forwarded-for`. */
function requestHeaders(client: string | undefined, headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out = endToEnd(headers);
  const prior = out['x-forwarded-for'];
  const chain = [prior, client].filter((part) => part !== undefined && part !== '').join(', ');
  if (chain !== '') out['x-forwarded-for'] = chain;
  return out;
}

/** What fail() needs of a reply. */
interface Answer {
  readonly sent: boolean;
  header(name: string, value: string): unknown;
  code(status: number): { send(body: unknown): unknown };
}

/** Answers one of our own errors unless the answer has started. */
function fail(reply: Answer, error: EggmeshError): void {
  if (reply.sent) return;
  // The rest of a refused upload would otherwise have to be read before the connection can be reused.
  if (error.statusCode === 413) reply.header('connection', 'close');
  reply.code(error.statusCode).send(error.toBody());
}

/**
 * The write routes of the route table (`@eggmesh/rest`), forwarded to the write-api
 * (`EGGMESH_WRITE_API_URL`) with @fastify/reply-from over a pool of undici connections: the request
 * body read whole within `EGGMESH_BODY_LIMIT_BYTES` (413 past it), the write-api's answer streamed
 * back with its headers (`x-log-position`, `retry-after`, `www-authenticate`, `location`…), and a
 * write-api that does not answer within `EGGMESH_HTTP_REQUEST_TIMEOUT_MS` or at all told as 504 or
 * 502 in the `{error, code}` shape, naming the service, never its address (the log has that). A
 * client that goes away mid-answer takes its upstream request with it: the connection is closed, not
 * returned to the pool half read.
 */
export function forwardWrites(app: FastifyInstance, config: ConfigOf<'read-api'>): void {
  const { requestTimeoutMs } = config.http;
  app.register(async (scope) => {
    await scope.register(replyFrom, {
      base: config.upstreams.write,
      undici: {
        connections: WRITE_API_CONNECTIONS,
        pipelining: 1,
        headersTimeout: requestTimeoutMs,
        bodyTimeout: requestTimeoutMs,
        connect: { timeout: Math.min(requestTimeoutMs, 5000) },
      },
      // Never sent twice: a retried write could be committed twice.
      retryMethods: [],
      disableRequestLogging: !config.logRequests,
    });
    // The body is passed on as the client sent it, read whole up to the body limit.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const service = 'write-api';
    const forward = (request: FastifyRequest, reply: FastifyReply) => {
      const body = request.body;
      reply.from(request.url, {
        ...(Buffer.isBuffer(body)
          ? { body, contentType: request.headers['content-type'] ?? 'application/octet-stream' }
          : {}),
        rewriteRequestHeaders: (_request, headers) =>
          requestHeaders(request.raw.socket.remoteAddress, headers as IncomingHttpHeaders),
        rewriteHeaders: (headers) => endToEnd(headers),
        onError: (failed, { error }) => {
          const timedOut = (error as { statusCode?: number }).statusCode === 504;
          fail(
            failed,
            new EggmeshError(timedOut ? 'EGGMESH_UPSTREAM_TIMEOUT' : 'EGGMESH_UPSTREAM_UNAVAILABLE', [
              service,
            ]),
          );
        },
      });
      return reply;
    };
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return fail(reply, new EggmeshError('EGGMESH_BODY_TOO_LARGE', [config.bodyLimitBytes]));
      // No content type (a body without one, or QUERY without one): Fastify left the body unread; the
      // write-api answers such a request itself (405, 415…), so it gets it as the client sent it.
      if (
        error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ||
        error.code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE'
      ) {
        request.body = request.raw;
        return forward(request, reply);
      }
      if ((error.statusCode ?? 500) < 500)
        return fail(reply, new EggmeshError('EGGMESH_BAD_REQUEST', [], {}, `bad request: ${error.message}`));
      request.log.error({ err: error }, 'forwarding failed');
      return fail(reply, new EggmeshError('EGGMESH_INTERNAL'));
    });
    const every = scope.supportedMethods.filter((method) => method !== 'CONNECT');
    const writes = every.filter((method) => !READ_METHODS.includes(method));
    for (const route of writeRoutes)
      scope.route({ method: route.methods === 'all' ? every : writes, url: route.url, handler: forward });
  });
}
