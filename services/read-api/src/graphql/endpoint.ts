import type { Authenticator, ConfigOf } from '@eggmesh/service-kit';
import type { EntityReader, ReadStore as PortReadStore } from '@eggmesh/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import mercurius, { type IResolvers, type MercuriusContext } from 'mercurius';
import {
  type Consistency,
  chooseReader,
  MIN_POSITION_HEADER,
  type Positions,
  parseMinPosition,
  positionTiming,
  SERVER_TIMING_HEADER,
  STALE_HEADER,
} from '../consistency.js';
import { graphqlError } from '../errors.js';
import { estimateCost, estimateResponseBytes, FIELD_BYTES } from '../limits/cost.js';
import { checkDocumentSize, nestingFor } from '../limits/document-size.js';
import { checkShape } from '../limits/shape.js';
import { ReadContext } from '../read-context.js';
import type { ReadGraphContext } from '../schema/resolvers.js';
import { liveProjections, subscriptionSdl } from '../subscriptions/live.js';
import { formatErrors } from './format-errors.js';
import { isJson } from './json-source.js';

/**
 * What the GraphQL endpoints read from: entities and projections, how far each has come in the log,
 * when that moves and what the projector committed (the `ReadStore` port without its lifecycle).
 */
export type ReadStore = EntityReader &
  Positions &
  Pick<PortReadStore, 'projectionChanges' | 'query' | 'aggregate' | 'view'>;

export interface EndpointOptions {
  readonly path: string;
  readonly schema: string;
  readonly resolvers: Record<string, Record<string, unknown>>;
  /** With EGGMESH_AUTH_READS=true, queries need a token granting eggmesh:read (GraphiQL's page does not). */
  readonly auth: Authenticator;
  readonly store: ReadStore;
  /**
   * A reader of the primary where `store` reads copies that may lag it (MongoDB secondaries): a read
   * whose `x-min-position` the replica has not reached when the wait runs out is served from it.
   */
  readonly primary?: ReadStore;
  readonly clock: () => number;
  readonly config: ConfigOf<'read-api'>;
  /** Root lists without `limit` return every row (the per-entity endpoints, as MeshQL); else one page. */
  readonly wholeLists?: boolean;
  /** Serves the live projections (GraphQL subscriptions over WebSocket) on this endpoint. */
  readonly subscriptions?: boolean;
}

/** `read` is replaced when an `x-min-position` read is served by a view or by the primary. */
type EndpointContext = MercuriusContext &
  ReadGraphContext & { read: ReadGraphContext['read']; consistency?: Consistency };

const operationNameOf = (request: FastifyRequest): string | undefined => {
  const source = (request.method === 'GET' ? request.query : request.body) as {
    operationName?: unknown;
  } | null;
  return typeof source?.operationName === 'string' ? source.operationName : undefined;
};

const isUpgrade = (request: FastifyRequest): boolean =>
  request.headers.upgrade?.toLowerCase() === 'websocket';

/**
 * One GraphQL endpoint: a mercurius instance with graphql-jit, the depth rule, the cost limit,
 * `x-min-position` waits and coded errors. Register it inside its own encapsulated plugin.
 */
export async function graphqlEndpoint(scope: FastifyInstance, options: EndpointOptions): Promise<void> {
  const { store, clock, config } = options;
  const costModel = { ...config.list, maxRows: config.graphql.maxRows };
  const budget = { maxRows: config.graphql.maxRows, maxBytes: config.graphql.maxResponseBytes };
  const guard = options.auth.hook({ kind: 'read' }, (reply, error) =>
    reply.send({ data: null, errors: [{ message: error.message, extensions: { code: error.code } }] }),
  );
  if (guard !== undefined) {
    // A WebSocket upgrade carries its token in `connection_init` (browsers cannot set its headers);
    // @fastify/websocket never runs an HTTP handler for an upgrade, so no query passes unchecked.
    scope.addHook('onRequest', async (request, reply) =>
      request.url.startsWith('/graphiql') || isUpgrade(request) ? undefined : guard(request, reply),
    );
  }
  const live = options.subscriptions
    ? liveProjections(scope, { store, auth: options.auth, config, clock })
    : undefined;
  await scope.register(mercurius, {
    schema: live ? options.schema + subscriptionSdl() : options.schema,
    resolvers: (live
      ? { ...options.resolvers, Subscription: live.resolvers }
      : options.resolvers) as IResolvers,
    ...(live ? { subscription: live.options } : {}),
    path: options.path,
    // GraphiQL is ours (http/graphiql.ts): mercurius' page loads its scripts from a CDN.
    graphiql: false,
    jit: 1,
    graphql: { parseOptions: { maxTokens: config.graphql.maxTokens } },
    errorFormatter: formatErrors as never,
    context: (): ReadGraphContext => ({
      read: new ReadContext(store, clock, config.list, budget, options.wholeLists ?? false),
    }),
  });

  if (live) {
    scope.graphql.addHook('preSubscriptionParsing', live.hooks.preSubscriptionParsing);
    scope.graphql.addHook('preSubscriptionExecution', live.hooks.preSubscriptionExecution);
  }

  const sizeLimits = {
    maxBytes: config.graphql.maxDocumentBytes,
    maxNesting: nestingFor(config.graphql.maxDepth),
  };
  const shapeLimits = { maxFields: config.graphql.maxFields, maxDepth: config.graphql.maxDepth };

  // Every request, cached document or not: the size checks are one pass over the text.
  scope.graphql.addHook('preParsing', async (_schema, source) => {
    checkDocumentSize(source, sizeLimits);
    // Mercurius parses a query that is not GraphQL as a JSON AST when it can, and its validation then
    // crashes on anything that is not one: GraphQL over HTTP sends documents as strings, so refuse JSON.
    if (isJson(source)) {
      throw graphqlError('PARSE_FAILED', 'query must be a GraphQL document, not JSON');
    }
  });

  // Only for documents not parsed before (mercurius caches the valid ones), before graphql's
  // validation rules and graphql-jit's compiler, which both walk the expanded selections.
  scope.graphql.addHook('preValidation', async (_schema, document) => {
    checkShape(document, shapeLimits);
  });

  scope.graphql.addHook<EndpointContext>('preExecution', async (schema, document, context, variables) => {
    const request = context.reply.request;
    const requested = parseMinPosition(request.headers[MIN_POSITION_HEADER]);
    const cost = estimateCost(schema, document, operationNameOf(request), variables, costModel);
    if (cost > config.graphql.maxCost) {
      throw graphqlError(
        'COST',
        `the query may read up to ${cost} rows; the limit is ${config.graphql.maxCost} (a list counts its limit, default ${costModel.defaultLimit}; a list relation its limit per parent row): pass smaller limits or select less`,
      );
    }
    // What the response byte cap would refuse once read is refused before anything is read.
    const bytes = estimateResponseBytes(schema, document, operationNameOf(request), variables, costModel);
    if (bytes > config.graphql.maxResponseBytes) {
      throw graphqlError(
        'COST',
        `the answer could carry about ${bytes} bytes (${FIELD_BYTES} per selected field and row, lists full); a response carries at most ${config.graphql.maxResponseBytes}: pass smaller limits or select less`,
      );
    }
    if (requested === undefined) return;
    const waitStart = performance.now();
    // The wait and the reads after it go through one view, so the copy that answers has what the wait saw.
    const view = store.view?.();
    if (view) context.reply.raw.once('close', () => void view.end().catch(() => undefined));
    const { consistency, reader } = await chooseReader(
      view ?? store,
      options.primary,
      requested,
      config.minPositionWaitMs,
    );
    context.read = new ReadContext(reader, clock, config.list, budget, options.wholeLists ?? false);
    context.consistency = consistency;
    context.reply.header(SERVER_TIMING_HEADER, positionTiming(performance.now() - waitStart));
    if (consistency.stale) context.reply.header(STALE_HEADER, 'true');
  });

  scope.graphql.addHook<Record<string, unknown>, EndpointContext>(
    'onResolution',
    async (execution, context) => {
      if (context.consistency) {
        (execution as { extensions?: Record<string, unknown> }).extensions = {
          ...execution.extensions,
          consistency: context.consistency,
        };
      }
    },
  );
}
