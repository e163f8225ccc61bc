import { materialize, type ProjectionName } from '@eggmesh/projections';
import { type EntityName, entities, type Relation } from '@eggmesh/schema';
import {
  type BucketUnit,
  fieldKind,
  isStoreError,
  type OrderBy,
  type PageOptions,
  type QueryReader,
  type ReadStore,
  type StoredRecord,
  storeErrorCodes,
  type Where,
} from '@eggmesh/store';
import { graphqlError } from './errors.js';
import { checkLimit } from './limits/cost.js';
import { RelationLoader } from './loaders/relation-loader.js';
import type { ListLimits } from './schema/sdl.js';

/** Where a row carries the `at` it was read with, so nested relations read the same point in time. */
export const AT = Symbol('eggmesh.at');

/** A row as GraphQL resolves it: payload fields plus `id` (projections: the public document). */
export type Node = Record<string, unknown> & { [AT]?: number | undefined };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id argument that is not a UUID is the client's error, as in a REST path (`EGGMESH_BAD_ID`). */
export function checkId(id: string): void {
  if (!UUID.test(id))
    throw graphqlError('BAD_ID', `id must be a UUID (got ${JSON.stringify(id.slice(0, 64))})`);
}

/** `at` is epoch ms, never negative, as REST's `?at=`. */
function checkAt(at: number | null | undefined): number | undefined {
  if (at == null) return undefined;
  if (at < 0) throw graphqlError('BAD_QUERY', `at must be a number ≥ 0 (epoch ms), got ${at}`);
  return at;
}

/** The arguments every list query takes. */
export interface PageArgs {
  readonly at?: number | null;
  readonly limit?: number | null;
  readonly after?: string | null;
}

/** The arguments of a list relation field (`where` and `orderBy` in the unified schema). */
export interface RelationArgs {
  readonly limit?: number | null;
  readonly after?: string | null;
  readonly where?: Record<string, unknown> | null;
  readonly orderBy?: ReadonlyArray<Record<string, unknown>> | null;
}

/** The arguments of a connection field (`farmsConnection`). */
export interface ConnectionArgs {
  readonly where?: Record<string, unknown> | null;
  readonly orderBy?: ReadonlyArray<Record<string, unknown>> | null;
  readonly first?: number | null;
  readonly after?: string | null;
  readonly at?: number | null;
}

/** The arguments of an aggregate field (`layReportsAggregate`). */
export interface AggregateArgs {
  readonly where?: Record<string, unknown> | null;
  readonly groupBy?: readonly string[] | null;
  readonly bucket?: 'HOUR' | 'DAY' | 'WEEK' | null;
  readonly at?: number | null;
}

/** A connection as GraphQL resolves it. */
export interface Connection {
  readonly nodes: Node[];
  readonly edges: Array<{ cursor: string; node: Node }>;
  readonly pageInfo: { hasNextPage: boolean; endCursor: string | null };
  readonly totalCount: number | undefined;
}

/** Ids are stored in lower case: an id filter matches them in any case (as `getById` does). */
function lowerIds(entity: EntityName, where: Record<string, unknown>): Where {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(where)) {
    if (value == null) continue;
    if (key === 'and' || key === 'or')
      out[key] = (value as Record<string, unknown>[]).map((w) => lowerIds(entity, w));
    else if (key === 'not') out[key] = lowerIds(entity, value as Record<string, unknown>);
    else if (fieldKind(entity, key) === 'id') {
      const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
      const condition = value as { eq?: unknown; in?: unknown[] };
      out[key] = { ...condition, eq: lower(condition.eq), in: condition.in?.map(lower) };
    } else out[key] = value;
  }
  return out as Where;
}

/** `[{ breed: ASC }, { dob: DESC }]`: each object names exactly one field. */
function orderOf(orderBy: ConnectionArgs['orderBy']): OrderBy[] {
  return (orderBy ?? []).map((key) => {
    const entries = Object.entries(key).filter(([, direction]) => direction != null);
    if (entries.length !== 1) {
      throw graphqlError(
        'BAD_QUERY',
        'each orderBy object names exactly one field, e.g. [{ dob: DESC }, { name: ASC }]',
      );
    }
    const [field, direction] = entries[0] as [string, 'ASC' | 'DESC'];
    return { field, direction };
  });
}

/** What one response may carry. */
export interface ResponseBudget {
  readonly maxRows: number;
  readonly maxBytes: number;
}

/** About what a value adds to a JSON response; cheap, it never serializes. */
function approxBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 3;
    case 'number':
      return 12;
    case 'boolean':
      return 6;
    case 'object':
      return value === null ? 5 : JSON.stringify(value).length + 1;
    default:
      return 0;
  }
}

/** A row as a node, with about what it adds to a response. */
interface Built {
  readonly node: Node;
  readonly bytes: number;
}

/** About what a node's fields add to a JSON response. */
function nodeBytes(node: Node): number {
  let bytes = 0;
  for (const key in node) bytes += key.length + 3 + approxBytes(node[key]);
  return bytes;
}

/**
 * Per-request reading state: the store, one relation loader, one `now` for the whole tree, and the
 * rows and bytes the response has taken so far.
 */
export class ReadContext {
  private readonly loader: RelationLoader;
  private fixedNow: number | undefined;
  private rows = 0;
  private bytes = 0;
  /** Most rows the reads in flight may still return. */
  private reserved = 0;
  private waiting: Array<() => void> = [];
  /** Set once the response went over its budget: the whole response is then refused. */
  exceeded: string | undefined;

  constructor(
    private readonly store: QueryReader & Pick<ReadStore, 'aggregate'>,
    private readonly clock: () => number,
    private readonly limits: ListLimits,
    private readonly budget: ResponseBudget = { maxRows: Infinity, maxBytes: Infinity },
    /**
     * Root lists asked for without `limit` return every matching row (MeshQL's per-entity endpoints),
     * read in pages of the maximum limit; the response budget still refuses what is too big.
     */
    private readonly wholeLists = false,
  ) {
    this.loader = new RelationLoader(store, {
      remaining: () => Math.max(0, this.budget.maxRows - this.rows - this.reserved),
      read: (bound, run) => this.read(bound, run, (rows) => rows),
      refuse: () => {
        this.exceeded ??= this.tooManyRows();
        return graphqlError('RESPONSE_TOO_LARGE', this.exceeded);
      },
    });
  }

  /**
   * Runs one store read that returns at most `bound` rows, then `use` on its result (which counts the
   * rows) before the next waiting read may start. SQLite answers synchronously, so sibling fields
   * would all read before any counted its rows: a read that might not fit beside those in flight
   * first waits for them, and none starts once the response is over budget.
   */
  private async read<T, R>(bound: number, run: () => Promise<T>, use: (result: T) => R): Promise<R> {
    this.checkBudget();
    while (this.reserved > 0 && this.rows + this.reserved + bound > this.budget.maxRows) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      this.checkBudget();
    }
    this.reserved += bound;
    try {
      return use(await run());
    } finally {
      this.reserved -= bound;
      if (this.reserved === 0 && this.waiting.length > 0) {
        const waiting = this.waiting;
        this.waiting = [];
        for (const wake of waiting) wake();
      }
    }
  }

  private tooManyRows(): string {
    return `the response would carry more than ${this.budget.maxRows} rows: page with limit/after or select less`;
  }

  /** Refuses further reads once over budget: nothing more is read for a response that will not be sent. */
  private checkBudget(): void {
    if (this.exceeded) throw graphqlError('RESPONSE_TOO_LARGE', this.exceeded);
  }

  /** Counts rows (and their `bytes`) going into the response; past the budget, marks it and stops. */
  private take(rows: number, bytes: number): void {
    this.rows += rows;
    this.bytes += bytes;
    const { maxRows, maxBytes } = this.budget;
    if (this.rows > maxRows) {
      this.exceeded = this.tooManyRows();
    } else if (this.bytes > maxBytes) {
      this.exceeded = `the response would carry more than ${maxBytes} bytes of rows: page with limit/after or select less`;
    }
    this.checkBudget();
  }

  /** The reference time of projection windows when the query has no `at`: read once per request. */
  now(): number {
    this.fixedNow ??= this.clock();
    return this.fixedNow;
  }

  private build(entity: EntityName, record: StoredRecord, at: number | undefined): Built {
    let node: Node;
    if (entities[entity].kind !== 'projection') node = { ...record.payload, id: record.id };
    else node = materialize(entity as ProjectionName, record.payload, at ?? this.now());
    if (at !== undefined) node[AT] = at;
    return { node, bytes: nodeBytes(node) };
  }

  /** Rows as nodes, counted into the response. */
  private nodes(entity: EntityName, records: readonly StoredRecord[], at: number | undefined): Node[] {
    const nodes = new Array<Node>(records.length);
    let bytes = 0;
    for (let i = 0; i < records.length; i++) {
      const built = this.build(entity, records[i] as StoredRecord, at);
      nodes[i] = built.node;
      bytes += built.bytes;
    }
    this.take(nodes.length, bytes);
    return nodes;
  }

  async byId(
    entity: EntityName,
    id: string | null | undefined,
    at: number | null | undefined,
  ): Promise<Node | null> {
    if (id == null) return null;
    checkId(id);
    const when = checkAt(at);
    return this.read(
      1,
      () => this.store.get(entity, id, { at: when }),
      (record) => {
        if (!record) return null;
        const { node, bytes } = this.build(entity, record, when);
        this.take(1, bytes);
        return node;
      },
    );
  }

  async all(entity: EntityName, args: PageArgs): Promise<Node[]> {
    if (this.wholeLists && args.limit == null) {
      return this.whole(entity, args, (options) => this.store.list(entity, options));
    }
    const options = this.page(args);
    return this.read(
      options.limit,
      () => this.store.list(entity, options),
      (records) => this.nodes(entity, records, options.at),
    );
  }

  async filter(
    entity: EntityName,
    field: string,
    value: string | null | undefined,
    args: PageArgs,
  ): Promise<Node[]> {
    if (value == null) return [];
    if (this.wholeLists && args.limit == null) {
      return this.whole(entity, args, (options) => this.store.findBy(entity, field, value, options));
    }
    const options = this.page(args);
    return this.read(
      options.limit,
      () => this.store.findBy(entity, field, value, options),
      (records) => this.nodes(entity, records, options.at),
    );
  }

  /**
   * A relation field of `parent`: null or [] when nothing matches, never an error. A list relation
   * reads one page per parent (`limit`, default and cap as for root lists, after `after`).
   */
  async related(relation: Relation, parent: Node, args: RelationArgs = {}): Promise<Node | Node[] | null> {
    const key = parent[relation.parentField];
    const at = parent[AT];
    if (typeof key !== 'string') return relation.kind === 'single' ? null : [];
    this.checkBudget();
    if (relation.kind === 'single') {
      const record = (await this.loader.load(relation.target, relation.targetField, key, at))[0];
      if (!record) return null;
      const { node, bytes } = this.build(relation.target, record, at);
      this.take(1, bytes);
      return node;
    }
    const { limit, after } = this.page(args);
    const orderBy = orderOf(args.orderBy);
    if (args.where == null && orderBy.length === 0) {
      const records = await this.loader.load(relation.target, relation.targetField, key, at, {
        limit,
        after,
      });
      return this.nodes(relation.target, records, at);
    }
    if (after !== undefined) {
      throw graphqlError(
        'BAD_QUERY',
        `after pages a relation in id order; with where or orderBy, page with ${relation.target}'s connection field`,
      );
    }
    const where = args.where ? lowerIds(relation.target, args.where) : undefined;
    try {
      const records = await this.loader.load(relation.target, relation.targetField, key, at, {
        limit,
        after,
        where,
        orderBy,
      });
      return this.nodes(relation.target, records, at);
    } catch (error) {
      if (isStoreError(error, storeErrorCodes.INVALID_QUERY)) throw graphqlError('BAD_QUERY', error.message);
      throw error;
    }
  }

  /**
   * A page of the rows matching a filter in an order, with the total count: the store compiles the
   * filter, order and cursor (SQL on SQLite, a pipeline on MongoDB). A filter, order or cursor the
   * entity does not take is the client's error (`EGGMESH_BAD_QUERY`).
   */
  async connection(entity: EntityName, args: ConnectionArgs, count = true): Promise<Connection> {
    const first = args.first ?? this.limits.defaultLimit;
    if (!Number.isInteger(first) || first < 0 || first > this.limits.maxLimit) {
      throw graphqlError('BAD_QUERY', `first must be between 0 and ${this.limits.maxLimit} (got ${first})`);
    }
    const at = checkAt(args.at);
    const options = {
      at,
      first,
      where: args.where ? lowerIds(entity, args.where) : undefined,
      orderBy: orderOf(args.orderBy),
      after: args.after ?? undefined,
      count,
    };
    try {
      return await this.read(
        first,
        () => this.store.query(entity, options),
        (page) => {
          const nodes = this.nodes(entity, page.records, at);
          return {
            nodes,
            edges: nodes.map((node, i) => ({ cursor: page.cursors[i] as string, node })),
            pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.cursors.at(-1) ?? null },
            totalCount: page.totalCount,
          };
        },
      );
    } catch (error) {
      if (isStoreError(error, storeErrorCodes.INVALID_QUERY)) throw graphqlError('BAD_QUERY', error.message);
      throw error;
    }
  }

  /**
   * Groups of an event's rows with their numbers, computed by the store; at most `maxLimit` groups,
   * each counted as a row of the response.
   */
  async aggregate(entity: EntityName, args: AggregateArgs): Promise<Node[]> {
    const at = checkAt(args.at);
    const fields = Object.entries(entities[entity].queryFields);
    const options = {
      at,
      where: args.where ? lowerIds(entity, args.where) : undefined,
      groupBy: args.groupBy ?? [],
      bucket: args.bucket
        ? {
            field: fields.find(([, kind]) => kind === 'timestamp')?.[0] ?? 'timestamp',
            unit: args.bucket.toLowerCase() as BucketUnit,
          }
        : undefined,
      fields: fields.filter(([, kind]) => kind === 'number').map(([field]) => field),
      maxGroups: this.limits.maxLimit,
    };
    try {
      return await this.read(
        this.limits.maxLimit,
        () => this.store.aggregate(entity, options),
        (groups) => {
          const nodes: Node[] = groups.map((g) => ({
            group: g.keys,
            bucket: g.bucket === null ? null : new Date(g.bucket).toISOString(),
            count: g.count,
            sum: g.sum,
            min: g.min,
            max: g.max,
            avg: g.avg,
          }));
          this.take(
            nodes.length,
            nodes.reduce((n, node) => n + nodeBytes(node), 0),
          );
          return nodes;
        },
      );
    } catch (error) {
      if (isStoreError(error, storeErrorCodes.INVALID_QUERY)) throw graphqlError('BAD_QUERY', error.message);
      throw error;
    }
  }

  /** Every row a root list matches (after `after`), page by page in id order, each page counted. */
  private async whole(
    entity: EntityName,
    args: PageArgs,
    readPage: (options: PageOptions) => Promise<StoredRecord[]>,
  ): Promise<Node[]> {
    const size = this.limits.maxLimit;
    const at = checkAt(args.at);
    let after = args.after ?? undefined;
    let result: Node[] | undefined;
    for (;;) {
      let last: string | undefined;
      const options: PageOptions = { at, limit: size, after };
      const nodes = await this.read(
        size,
        () => readPage(options),
        (records) => {
          last = records.at(-1)?.id;
          return this.nodes(entity, records, at);
        },
      );
      if (result === undefined) result = nodes;
      else for (const node of nodes) result.push(node);
      if (nodes.length < size || last === undefined) return result;
      after = last;
    }
  }

  private page(args: PageArgs): PageOptions {
    const { defaultLimit, maxLimit } = this.limits;
    const limit = args.limit ?? defaultLimit;
    checkLimit(limit, maxLimit);
    return { at: checkAt(args.at), limit, after: args.after ?? undefined };
  }
}
