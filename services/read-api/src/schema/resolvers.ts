import { type EntityName, entities, entityNames, relationsOf } from '@eggmesh/schema';
import type { GraphQLResolveInfo, SelectionNode } from 'graphql';
import {
  type AggregateArgs,
  type ConnectionArgs,
  checkId,
  type Node,
  type PageArgs,
  type ReadContext,
} from '../read-context.js';
import { unifiedNames } from './naming.js';
import { safeIntScalar } from './safe-int.js';
import { reachableFrom } from './sdl.js';

/** What every resolver finds in the GraphQL context. */
export interface ReadGraphContext {
  readonly read: ReadContext;
}

type Args = PageArgs & { readonly id?: string | null; readonly zone?: string | null };
type Resolver = (parent: Node, args: Args, context: ReadGraphContext, info: GraphQLResolveInfo) => unknown;
type Resolvers = Record<string, Record<string, Resolver>>;
/** What mercurius takes: field resolvers per type, and the functions of custom scalars. */
type SchemaResolvers = Record<string, Record<string, Resolver> | typeof safeIntScalar>;

function relationResolvers(types: readonly EntityName[]): Resolvers {
  const resolvers: Resolvers = {};
  for (const entity of types) {
    const fields: Record<string, Resolver> = {};
    for (const relation of relationsOf(entity)) {
      fields[relation.field] = (parent, args, context) => context.read.related(relation, parent, args);
    }
    if (Object.keys(fields).length > 0) resolvers[entities[entity].typeName] = fields;
  }
  return resolvers;
}

/**
 * Ids are stored in lower case (the schema package normalizes them); accept them in any case. One that
 * is not a UUID fails its field with `EGGMESH_BAD_ID`, as it fails a REST path.
 */
const lowerId = (id: string | null | undefined) => {
  if (id != null) checkId(id);
  return id?.toLowerCase();
};

/**
 * Whether a connection field selects `totalCount` (directly or in a fragment): only then does the
 * store count every matching row.
 */
function selectsTotalCount(info: GraphQLResolveInfo): boolean {
  const seen = new Set<string>();
  const walk = (selections: readonly SelectionNode[]): boolean =>
    selections.some((s) => {
      if (s.kind === 'Field') return s.name.value === 'totalCount';
      if (s.kind === 'InlineFragment') return walk(s.selectionSet.selections);
      if (seen.has(s.name.value)) return false;
      seen.add(s.name.value);
      const fragment = info.fragments[s.name.value];
      return fragment ? walk(fragment.selectionSet.selections) : false;
    });
  return info.fieldNodes.some((node) => walk(node.selectionSet?.selections ?? []));
}

interface RootNames {
  readonly single: string;
  readonly list: string;
  /** The connection field (unified schema only). */
  readonly connection?: string;
  /** The aggregate field of an event (unified schema only). */
  readonly aggregate?: string;
  readonly filter: (query: string) => string;
}

function rootResolvers(entity: EntityName, names: RootNames): Record<string, Resolver> {
  const fields: Record<string, Resolver> = {
    [names.single]: (_root, args, context) => context.read.byId(entity, lowerId(args.id), args.at),
    [names.list]: (_root, args, context) => context.read.all(entity, args),
  };
  if (names.connection) {
    fields[names.connection] = (_root, args, context, info) =>
      context.read.connection(entity, args as ConnectionArgs, selectsTotalCount(info));
  }
  if (names.aggregate && entities[entity].kind === 'event') {
    fields[names.aggregate] = (_root, args, context) => context.read.aggregate(entity, args as AggregateArgs);
  }
  for (const filter of entities[entity].filters) {
    fields[names.filter(filter.query)] = (_root, args, context) =>
      context.read.filter(
        entity,
        filter.field,
        filter.argument === 'id' ? lowerId(args.id) : args[filter.argument],
        args,
      );
  }
  return fields;
}

/** Resolvers of `POST /<entity>/graph`. */
export function entityResolvers(entity: EntityName): SchemaResolvers {
  return {
    Query: rootResolvers(entity, { single: 'getById', list: 'getAll', filter: (query) => query }),
    ...relationResolvers(reachableFrom(entity)),
    SafeInt: safeIntScalar,
  };
}

/** Resolvers of the unified `/graphql`. */
export function unifiedResolvers(): SchemaResolvers {
  const query: Record<string, Resolver> = {};
  for (const entity of entityNames) {
    const names = unifiedNames(entity, entities[entity].filters);
    Object.assign(query, rootResolvers(entity, { ...names, filter: (q) => names.filters.get(q) ?? q }));
  }
  return { Query: query, ...relationResolvers(entityNames), SafeInt: safeIntScalar };
}
