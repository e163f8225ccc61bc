import { materialize, type ProjectionName } from '@eggmesh/projections';
import { type EntityName, entities } from '@eggmesh/schema';
import type { Authenticator, ConfigOf } from '@eggmesh/service-kit';
import type { ProjectionChange } from '@eggmesh/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { graphqlError } from '../errors.js';
import type { ReadStore } from '../graphql/endpoint.js';
import { specifiedRules, validate } from '../graphql/runtime.js';
import { checkDocumentSize, nestingFor } from '../limits/document-size.js';
import { checkShape } from '../limits/shape.js';
import { checkId, ReadContext } from '../read-context.js';
import { ProjectionFeed } from './feed.js';
import { type SubscriberSocket, subscribe } from './subscriber.js';

type Config = ConfigOf<'read-api'>;

/** The keyed subscriptions: field, the projection it follows, its key argument, its change type. */
const keyed = [
  { field: 'farmOutput', entity: 'farm_output', key: 'farm_id', type: 'FarmOutputChange' },
  {
    field: 'containerInventory',
    entity: 'container_inventory',
    key: 'container_id',
    type: 'ContainerInventoryChange',
  },
  { field: 'henProductivity', entity: 'hen_productivity', key: 'hen_id', type: 'HenProductivityChange' },
] as const;

const AFTER_TEXT =
  'With `after` (a `position` this client received, or the `projections` position of `/ready`): every change committed after it, then the live ones; a client that reconnects with the last position it saw misses nothing.';

/** The subscription part of the unified schema: appended to `unifiedSdl`. */
export function subscriptionSdl(): string {
  const changeTypes = keyed.map(
    ({ entity, field, type }) => `"""
The ${entity} document as one projector commit left it.
"""
type ${type} {
  "The checkpoint (log position) of the commit that wrote it: pass it as \`after\` to resume."
  position: SafeInt!
  "True when its ${entities[entity].projectionKey?.replace('_id', '')} was deleted (the counters survive)."
  deleted: Boolean!
  ${field}: ${entities[entity].typeName}!
}`,
  );
  const fields = keyed.map(
    ({ field, entity, key, type }) => `  """
  The ${entity} of this ${key.replace('_id', '')}, each time the projector commits a change to it, in commit order. Without \`after\`: its current document first (when it has one). ${AFTER_TEXT}
  """
  ${field}(${key}: ID!, after: SafeInt): ${type}!`,
  );
  return `
${changeTypes.join('\n\n')}

"""
A projection document one projector commit wrote: the field of its kind is set, the others are null.
"""
type ProjectionChange {
  position: SafeInt!
  "farm_output, container_inventory or hen_productivity."
  entity: String!
  id: ID!
  "The zone of its farm (or container); null when it has none."
  zone: String
  deleted: Boolean!
  farmOutput: FarmOutput
  containerInventory: ContainerInventory
  henProductivity: HenProductivity
}

"""
Live projections over WebSocket (\`graphql-ws\` protocol) on \`/graphql\`. With EGGMESH_AUTH_READS=true
the \`connection_init\` payload carries \`{"authorization": "Bearer <jwt>"}\`.
"""
type Subscription {
${fields.join('\n')}
  """
  Every projection change of a zone (of every zone without \`zone\`), in commit order: the dashboard's feed. ${AFTER_TEXT}
  """
  projectionChanges(zone: String, after: SafeInt): ProjectionChange!
}
`;
}

/** What a subscription resolver finds in its context: the connection's socket and counters. */
interface LiveContext {
  readonly request: FastifyRequest;
  readonly live: {
    readonly socket: SubscriberSocket;
    readonly client: string;
    count: number;
  };
  read?: ReadContext;
}

/** Counts subscriptions per client address over every connection of this process. */
class ClientCounts {
  private readonly counts = new Map<string, number>();
  take(client: string, max: number): boolean {
    const count = this.counts.get(client) ?? 0;
    if (count >= max) return false;
    this.counts.set(client, count + 1);
    return true;
  }
  give(client: string): void {
    const count = (this.counts.get(client) ?? 1) - 1;
    if (count <= 0) this.counts.delete(client);
    else this.counts.set(client, count);
  }
}

export interface LiveOptions {
  readonly store: ReadStore;
  readonly auth: Authenticator;
  readonly config: Config;
  readonly clock: () => number;
}

/** The zone of the farm or container a change belongs to (the projections do not carry it). */
async function zoneOf(store: ReadStore, change: ProjectionChange): Promise<string | null> {
  const owner: [EntityName, unknown] =
    change.entity === 'container_inventory'
      ? ['container', change.id]
      : change.entity === 'farm_output'
        ? ['farm', change.id]
        : ['farm', change.payload.farm_id];
  if (typeof owner[1] !== 'string') return null;
  const record = await store.get(owner[0], owner[1]);
  const zone = record?.payload.zone;
  return typeof zone === 'string' ? zone : null;
}

/**
 * GraphQL subscriptions of the live projections on `/graphql`: the mercurius `subscription` option
 * (auth on `connection_init`, the per-connection context), the Subscription resolvers over one
 * {@link ProjectionFeed} per process, and the limits queries have (size, shape, validation).
 */
export function liveProjections(scope: FastifyInstance, { store, auth, config, clock }: LiveOptions) {
  const limits = config.subscriptions;
  const feed = new ProjectionFeed(store, limits, (error) =>
    scope.log.error({ err: error }, 'projection feed failed; retrying'),
  );
  scope.addHook('onClose', async () => feed.close());
  const clients = new ClientCounts();
  const budget = { maxRows: config.graphql.maxRows, maxBytes: config.graphql.maxResponseBytes };
  const freshRead = () => new ReadContext(store, clock, config.list, budget, false);

  /** A memo of zones for the changes of one feed read (the same farm's zone is read once). */
  const zones = new WeakMap<ProjectionChange, Promise<string | null>>();
  const zoneOfChange = (change: ProjectionChange) => {
    let zone = zones.get(change);
    if (!zone) {
      zone = zoneOf(store, change);
      zones.set(change, zone);
    }
    return zone;
  };

  const start = (
    context: LiveContext,
    wants: (change: ProjectionChange) => boolean | Promise<boolean>,
    after: number | null | undefined,
    initial?: () => Promise<{ readonly position: number; readonly change: ProjectionChange | null }>,
  ) => {
    const { live } = context;
    if (after != null && after < 0) throw graphqlError('BAD_QUERY', '`after` must not be negative');
    if (live.count >= limits.perConnection) {
      throw graphqlError(
        'TOO_MANY_SUBSCRIPTIONS',
        `this connection holds ${live.count} subscriptions, the most one connection may`,
      );
    }
    if (!clients.take(live.client, limits.perClient)) {
      throw graphqlError(
        'TOO_MANY_SUBSCRIPTIONS',
        `this client holds ${limits.perClient} subscriptions, the most one client may`,
      );
    }
    live.count += 1;
    return subscribe({
      feed,
      socket: live.socket,
      bufferBytes: limits.bufferBytes,
      wants,
      after: after ?? undefined,
      ...(initial ? { initial } : {}),
      onEnd: () => {
        live.count -= 1;
        clients.give(live.client);
      },
    });
  };

  const document = (change: ProjectionChange) =>
    materialize(change.entity as ProjectionName, change.payload, clock());

  const subscription: Record<string, unknown> = {};
  for (const { field, entity, key } of keyed) {
    subscription[field] = {
      subscribe: (_root: unknown, args: Record<string, unknown>, context: LiveContext) => {
        const raw = args[key] as string;
        checkId(raw);
        const id = raw.toLowerCase();
        return start(
          context,
          (change) => change.entity === entity && change.id === id,
          args.after as number | null | undefined,
          async () => {
            // The position first: the document read after it reflects at least that position.
            const position = await store.projectionPosition();
            const record = await store.get(entity, id);
            const change = record ? { position, entity, id, live: true, payload: record.payload } : null;
            return { position, change };
          },
        );
      },
      resolve: (change: ProjectionChange, _args: unknown, context: LiveContext) => {
        // One read context per event: relations of this event are read fresh, with their own budget.
        context.read = freshRead();
        return { position: change.position, deleted: !change.live, [field]: document(change) };
      },
    };
  }
  const fieldOf = Object.fromEntries(keyed.map(({ entity, field }) => [entity, field]));
  subscription.projectionChanges = {
    subscribe: (
      _root: unknown,
      args: { zone?: string | null; after?: number | null },
      context: LiveContext,
    ) =>
      start(
        context,
        args.zone == null ? () => true : async (change) => (await zoneOfChange(change)) === args.zone,
        args.after,
      ),
    resolve: async (change: ProjectionChange, _args: unknown, context: LiveContext) => {
      context.read = freshRead();
      return {
        position: change.position,
        entity: change.entity,
        id: change.id,
        zone: await zoneOfChange(change),
        deleted: !change.live,
        [fieldOf[change.entity] as string]: document(change),
      };
    },
  };

  const sizeLimits = {
    maxBytes: config.graphql.maxDocumentBytes,
    maxNesting: nestingFor(config.graphql.maxDepth),
  };
  const shapeLimits = { maxFields: config.graphql.maxFields, maxDepth: config.graphql.maxDepth };

  /** Mercurius runs subscriptions without its query pipeline: the same checks, before they start. */
  const hooks = {
    preSubscriptionParsing: async (_schema: GraphQLSchema, source: string) => {
      checkDocumentSize(source, sizeLimits);
    },
    preSubscriptionExecution: async (schema: GraphQLSchema, document: DocumentNode) => {
      checkShape(document, shapeLimits);
      const errors = validate(schema, document, specifiedRules);
      if (errors.length > 0) {
        throw graphqlError('VALIDATION_FAILED', errors.map((e) => e.message).join('; '));
      }
    },
  };

  return {
    resolvers: subscription,
    hooks,
    /** The `subscription` option of mercurius. */
    options: {
      keepAlive: limits.keepAliveMs,
      /** With EGGMESH_AUTH_READS the token comes in `connection_init` (browsers cannot set headers). */
      onConnect: async ({ payload }: { payload?: Record<string, unknown> }) => {
        if (!auth.guards({ kind: 'read' })) return true;
        const header = payload?.authorization ?? payload?.Authorization;
        const principal = await auth.authenticate(typeof header === 'string' ? header : undefined);
        auth.authorize(principal, { kind: 'read' });
        return true;
      },
      context: (socket: SubscriberSocket, request: FastifyRequest) => ({
        live: { socket, client: request.ip, count: 0 },
      }),
    },
  };
}
