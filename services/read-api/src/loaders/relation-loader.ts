import type { EntityName } from '@eggmesh/schema';
import type { EntityReader, StoredRecord } from '@eggmesh/store';

const resolved = Promise.resolve();

interface Batch {
  readonly target: EntityName;
  readonly field: string;
  readonly at: number | undefined;
  readonly waiting: Map<
    string,
    { resolve: (rows: StoredRecord[]) => void; reject: (error: unknown) => void }
  >;
}

/**
 * Collects the keys that relation fields ask for during one turn of the event loop and fetches them with
 * one store call per (target entity, field, `at`): `getMany` for `id`, `findByAny` for any other field.
 * One loader serves one request; it also remembers what it fetched, so a key is read at most once.
 */
export class RelationLoader {
  private readonly pending = new Map<string, Batch>();
  private readonly seen = new Map<string, Promise<StoredRecord[]>>();
  private scheduled = false;

  constructor(private readonly store: EntityReader) {}

  /** The `target` rows whose `field` equals `value`, as of `at`. */
  load(target: EntityName, field: string, value: string, at: number | undefined): Promise<StoredRecord[]> {
    const batchKey = `${target}\u0000${field}\u0000${at ?? ''}`;
    const key = `${batchKey}\u0000${value}`;
    const known = this.seen.get(key);
    if (known) return known;
    let batch = this.pending.get(batchKey);
    if (!batch) {
      batch = { target, field, at, waiting: new Map() };
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
    const options = { at: batch.at };
    try {
      const rows =
        batch.field === 'id'
          ? await this.store.getMany(batch.target, values, options)
          : await this.store.findByAny(batch.target, batch.field, values, options);
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
}
