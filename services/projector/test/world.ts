import { rmSync } from 'node:fs';
import { materialize, type ProjectionName } from '@eggmesh/projections';
import type { WriteOperation } from '@eggmesh/store';
import {
  dataFiles,
  openPrimaryStore,
  openProjectionStore,
  ProjectionReader,
  type SqlitePrimaryStore,
  type SqliteProjectionStore,
} from '@eggmesh/store-sqlite';
import { Projector } from '../src/index.js';
import { type Payload, type ProjectionSnapshot, snapshotOf, TestClock, tempDir } from './helpers.js';

/**
 * A data directory with a writable primary (on a test clock), a projector over its log and a reader
 * of the current projection generation, all on real SQLite files.
 */
export class World {
  readonly dir = tempDir();
  readonly files = dataFiles(this.dir);
  readonly clock: TestClock;
  readonly primary: SqlitePrimaryStore;
  readonly store: SqliteProjectionStore;
  readonly projector: Projector;
  readonly reader: ProjectionReader;

  constructor(start: number, batchSize = 1000) {
    this.clock = new TestClock(start);
    this.primary = openPrimaryStore({ file: this.files.primary, clock: this.clock.read });
    this.store = openProjectionStore({ dir: this.files.projectionsDir });
    this.projector = new Projector(this.primary.log, this.store, batchSize);
    this.reader = new ProjectionReader(this.files.projectionsDir, 0);
  }

  /** Commits the operations, then runs the projector to the head; returns the commit's version time. */
  async write(...operations: WriteOperation[]): Promise<number> {
    const result = this.primary.commitSync(operations);
    await this.projector.catchUp();
    return result.records[result.records.length - 1]!.createdAt;
  }

  /** Moves the clock by `ms` (default one minute), then writes. */
  later(ms: number, ...operations: WriteOperation[]): Promise<number> {
    this.clock.advance(ms);
    return this.write(...operations);
  }

  /** The public projection document as of `ref` (default: the clock); with `at`, as the log held it then. */
  doc(entity: ProjectionName, id: string, options: { ref?: number; at?: number } = {}): Payload | null {
    const record = this.reader.get(entity, id, options.at === undefined ? undefined : { at: options.at });
    if (!record) return null;
    return materialize(entity, record.payload, options.ref ?? options.at ?? this.clock.now);
  }

  /** Every visible projection document, materialized as of `ref` (with `at`: as the log held it then). */
  snapshot(ref: number, at?: number): ProjectionSnapshot {
    return snapshotOf(this.reader, ref, at);
  }

  entries() {
    return this.primary.readLogSync(0, Number.MAX_SAFE_INTEGER);
  }

  async close(): Promise<void> {
    this.reader.close();
    await this.store.close();
    await this.primary.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
