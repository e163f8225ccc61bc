import { materialize, type ProjectionName } from '@eggmesh/projections';
import { type EntityName, entities, type Relation } from '@eggmesh/schema';
import type { EntityReader, PageOptions, StoredRecord } from '@eggmesh/store';
import { graphqlError } from './errors.js';
import { RelationLoader } from './loaders/relation-loader.js';
import type { ListLimits } from './schema/sdl.js';

/** Where a row carries the `at` it was read with, so nested relations read the same point in time. */
export const AT = Symbol('eggmesh.at');

/** A row as GraphQL resolves it: payload fields plus `id` (projections: the public document). */
export type Node = Record<string, unknown> & { [AT]?: number | undefined };

/** The arguments every list query takes. */
export interface PageArgs {
  readonly at?: number | null;
  readonly limit?: number | null;
  readonly after?: string | null;
}

/** Per-request reading state: the store, one relation loader and one `now` for the whole tree. */
export class ReadContext {
  private readonly loader: RelationLoader;
  private fixedNow: number | undefined;

  constructor(
    private readonly store: EntityReader,
    private readonly clock: () => number,
    private readonly limits: ListLimits,
  ) {
    this.loader = new RelationLoader(store);
  }

  /** The reference time of projection windows when the query has no `at`: read once per request. */
  now(): number {
    this.fixedNow ??= this.clock();
    return this.fixedNow;
  }

  node(entity: EntityName, record: StoredRecord, at: number | undefined): Node {
    if (entities[entity].kind !== 'projection') return { ...record.payload, id: record.id, [AT]: at };
    const node: Node = materialize(entity as ProjectionName, record.payload, at ?? this.now());
    node[AT] = at;
    return node;
  }

  async byId(
    entity: EntityName,
    id: string | null | undefined,
    at: number | null | undefined,
  ): Promise<Node | null> {
    if (id == null) return null;
    const record = await this.store.get(entity, id, { at: at ?? undefined });
    return record ? this.node(entity, record, at ?? undefined) : null;
  }

  async all(entity: EntityName, args: PageArgs): Promise<Node[]> {
    const options = this.page(args);
    const records = await this.store.list(entity, options);
    return records.map((r) => this.node(entity, r, options.at));
  }

  async filter(
    entity: EntityName,
    field: string,
    value: string | null | undefined,
    args: PageArgs,
  ): Promise<Node[]> {
    const options = this.page(args);
    if (value == null) return [];
    const records = await this.store.findBy(entity, field, value, options);
    return records.map((r) => this.node(entity, r, options.at));
  }

  /** A relation field of `parent`: null or [] when nothing matches, never an error. */
  async related(relation: Relation, parent: Node): Promise<Node | Node[] | null> {
    const key = parent[relation.parentField];
    const at = parent[AT];
    if (typeof key !== 'string') return relation.kind === 'single' ? null : [];
    const records = await this.loader.load(relation.target, relation.targetField, key, at);
    if (relation.kind === 'single') {
      const record = records[0];
      return record ? this.node(relation.target, record, at) : null;
    }
    return records.map((r) => this.node(relation.target, r, at));
  }

  private page(args: PageArgs): PageOptions {
    const { defaultLimit, maxLimit } = this.limits;
    const limit = args.limit ?? defaultLimit;
    if (limit < 1) throw graphqlError('BAD_ARGUMENT', `limit must be at least 1 (got ${limit})`);
    return { at: args.at ?? undefined, limit: Math.min(limit, maxLimit), after: args.after ?? undefined };
  }
}
