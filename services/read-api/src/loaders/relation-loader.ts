import type { EntityName } from '@eggmesh/schema';
import type { OrderBy, QueryReader, RelationPageOptions, StoredRecord, Where } from '@eggmesh/store';
import { MAX_IN_VALUES } from '@eggmesh/store';

const resolved = Promise.resolve();

/**
 * A page of each key's rows: `limit` rows after `after`, in id order; or, with `where` or `orderBy`,
 * the first `limit` rows matching `where` in that order (then id).
 */
export interface KeyPage {
  readonly limit: number;
  readonly after: string | undefined;
  readonly where?: Where | undefined;
  readonly orderBy?: readonly OrderBy[] | undefined;
}

const queried = (page: KeyPage | undefined): page is KeyPage =>
  page !== undefined && (page.where !== undefined || (page.orderBy?.length ?? 0) > 0);

/** The response's row budget, as the loader sees it. */
export interface LoadBudget {
  /** Rows the response may still take. */
  remaining(): number;
  /** Runs a store read of at most `bound` rows once it fits the budget beside the reads in flight. */
  read<T>(bound: number, run: () => Promise<T>): Promise<T>;
  /** Marks the response as over budget; returns the error to fail the waiting fields with. */
  refuse(): Error;
}

interface Batch {
  readonly target: EntityName;
  readonly field: string;
  readonly at: number | undefined;
  readonly page: KeyPage | undefined;
  readonly waiting: Map<
    string,
    { resolve: (rows: StoredRecord[]) => void; reject: (error: unknown) => void }
  >;
}

/**
 * Collects the keys that relation fields ask for during one turn of the event loop and fetches them with
 * one store call per (target entity, field, `at`, page): `getMany` for `id`, `findByAny` for any other
 * field, which reads at most `page.limit` rows per key. One loader serves one request; it also
 * remembers what it fetched, so a key is read at most once per page.
 */
export class RelationLoader {
  private readonly pending = new Map<string, Batch>();
  private readonly seen = new Map<string, Promise<StoredRecord[]>>();
  private scheduled = false;

  constructor(
    private readonly store: QueryReader,
    private readonly budget?: LoadBudget,
  ) {}

  /** The `target` rows whose `field` equals `value`, as of `at`; a page of them when `page` is given. */
  load(
    target: EntityName,
    field: string,
    value: string,
    at: number | undefined,
    page?: KeyPage,
  ): Promise<StoredRecord[]> {
    const query = queried(page) ? `\u0000${JSON.stringify([page.where ?? null, page.orderBy ?? []])}` : '';
    const batchKey = `${target}\u0000${field}\u0000${at ?? ''}\u0000${page ? `${page.limit}\u0000${page.after ?? ''}${query}` : ''}`;
    const key = `${batchKey}\u0000${value}`;
    const known = this.seen.get(key);
    if (known) return known;
    let batch = this.pending.get(batchKey);
    if (!batch) {
      batch = { target, field, at, page, waiting: new Map() };
      this.pending.set(batchKey, batch);
    }
    const waiting = batch.waiting;
    const promise = new Promise<StoredRecord[]>((resolve, reject) => waiting.set(value, { resolve, reject }));
    this.seen.set(key, promise);
    if (!this.scheduled) {
      this.scheduled = true;
      // After the promise jobs queued now (sibling parents resolve in the same continuation), but
      // without waiting a whole event-loop turn behind other requests' I/O, as setImmediate would.
      resolved.then(() => process.nextTick(() => this.flush()));
    }
    return promise;
  }

  private flush(): void {
    this.scheduled = false;
    const batches = [...this.pending.values()];
    this.pending.clear();
    for (const batch of batches) void this.fetch(batch);
  }

  private async fetch(batch: Batch): Promise<void> {
    const values = [...batch.waiting.keys()];
    const options: RelationPageOptions = batch.page
      ? { at: batch.at, limit: batch.page.limit, after: batch.page.after }
      : { at: batch.at };
    try {
      if (queried(batch.page)) {
        const pages = await this.queryPaged(batch, batch.page, values);
        for (const [value, { resolve }] of batch.waiting) resolve(pages.get(value) ?? []);
        return;
      }
      const rows =
        batch.field === 'id'
          ? await this.gate(values.length, () => this.store.getMany(batch.target, values, options))
          : await this.findPaged(batch, values, options);
      const groups = new Map<string, StoredRecord[]>();
      for (const row of rows) {
        const value = batch.field === 'id' ? row.id : row.payload[batch.field];
        if (typeof value !== 'string') continue;
        const group = groups.get(value);
        if (group) group.push(row);
        else groups.set(value, [row]);
      }
      for (const [value, { resolve }] of batch.waiting) {
        const group = groups.get(value) ?? [];
        // findByAny's order across values is unspecified; each list is ordered by id.
        if (group.length > 1) group.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        resolve(group);
      }
    } catch (error) {
      for (const { reject } of batch.waiting.values()) reject(error);
    }
  }

  /**
   * Each key's first `page.limit` rows matching `page.where`, in `page.orderBy` order: one store
   * query for the keys of the batch (ordered by key, then the page's order), reading at most
   * keys × limit + 1 rows. When a key has more matches than its page, that query stops inside its
   * rows, and the keys it did not finish get one query each (at most limit + 1 rows apiece).
   */
  private async queryPaged(
    batch: Batch,
    page: KeyPage,
    values: string[],
  ): Promise<Map<string, StoredRecord[]>> {
    const pages = new Map<string, StoredRecord[]>();
    const limit = page.limit;
    const run = async (keys: string[]) => {
      const first = keys.length * limit;
      const result = await this.gate(first, () =>
        this.store.query(batch.target, {
          at: batch.at,
          where: page.where
            ? { and: [{ [batch.field]: { in: keys } }, page.where] }
            : { [batch.field]: { in: keys } },
          orderBy: [{ field: batch.field, direction: 'ASC' }, ...(page.orderBy ?? [])],
          first,
          count: false,
        }),
      );
      const read = new Map<string, StoredRecord[]>();
      for (const row of result.records) {
        const key = row.payload[batch.field] as string;
        const rows = read.get(key);
        if (rows) rows.push(row);
        else read.set(key, [row]);
      }
      // Rows come in key order: every key before the last one read is complete, and so is the last
      // one when it filled its page or nothing followed.
      const last = result.records.at(-1)?.payload[batch.field] as string | undefined;
      const unfinished: string[] = [];
      for (const key of keys) {
        const rows = read.get(key) ?? [];
        const complete = !result.hasNextPage || rows.length >= limit || (last !== undefined && key < last);
        if (complete) pages.set(key, rows.slice(0, limit));
        else unfinished.push(key);
      }
      return unfinished;
    };
    const remaining = this.budget?.remaining() ?? Number.POSITIVE_INFINITY;
    const chunk = Math.max(1, Math.min(MAX_IN_VALUES, Math.floor(remaining / limit)));
    const sorted = [...values].sort();
    for (let i = 0; i < sorted.length; i += chunk) {
      const unfinished = await run(sorted.slice(i, i + chunk));
      for (const key of unfinished) await run([key]);
    }
    return pages;
  }

  private gate<T>(bound: number, run: () => Promise<T>): Promise<T> {
    return this.budget ? this.budget.read(bound, run) : run();
  }

  /**
   * `findByAny`, in one call when the page times the keys fits the response's remaining budget, else
   * in chunks that each fit, stopping as soon as the rows read overrun it: a relation under many
   * parents never reads (much) more than the response could carry.
   */
  private async findPaged(
    batch: Batch,
    values: string[],
    options: RelationPageOptions,
  ): Promise<StoredRecord[]> {
    const remaining = this.budget?.remaining() ?? Number.POSITIVE_INFINITY;
    const perKey = batch.page?.limit ?? Number.POSITIVE_INFINITY;
    const chunk = Math.max(1, Math.floor(remaining / perKey));
    const find = (keys: string[]) =>
      this.gate(keys.length * perKey, () => this.store.findByAny(batch.target, batch.field, keys, options));
    if (values.length <= chunk) return find(values);
    const rows: StoredRecord[] = [];
    for (let i = 0; i < values.length; i += chunk) {
      const part = await find(values.slice(i, i + chunk));
      for (const row of part) rows.push(row);
      if (rows.length > remaining && this.budget) throw this.budget.refuse();
    }
    return rows;
  }
}
