import { join } from 'node:path';
import { type EntityName, entities } from '@eggmesh/schema';
import type { EntityReader, PageOptions, ReadOptions, RelationPageOptions } from '@eggmesh/store';
import { SqlitePrimaryStore } from './primary-store.js';
import { ProjectionReader } from './projection-store.js';

/** Where the embedded tier keeps its files inside the data directory. */
export function dataFiles(dataDir: string) {
  return { primary: join(dataDir, 'primary.db'), projectionsDir: join(dataDir, 'projections') } as const;
}

/**
 * Reads every entity: actors and events from the primary file, projections from the current
 * projection generation. The read service opens it read-only; the write service passes its own primary.
 */
export class SqliteReadStore implements EntityReader {
  constructor(
    readonly primary: SqlitePrimaryStore,
    readonly projections: ProjectionReader,
  ) {}

  private source(entity: EntityName) {
    return entities[entity].kind === 'projection' ? this.projections : this.primary.sync;
  }

  /** The log position the entity tables reflect (the replica is the primary's file itself). */
  replicaPosition(): number {
    return this.primary.headSync();
  }

  /** The log position the projections reflect. */
  projectionPosition(): number {
    return this.projections.checkpoint();
  }

  async get(entity: EntityName, id: string, options?: ReadOptions) {
    return this.source(entity).get(entity, id, options);
  }
  async getMany(entity: EntityName, ids: readonly string[], options?: ReadOptions) {
    return this.source(entity).getMany(entity, ids, options);
  }
  async findBy(entity: EntityName, field: string, value: string, options: PageOptions) {
    return this.source(entity).findBy(entity, field, value, options);
  }
  async findByAny(
    entity: EntityName,
    field: string,
    values: readonly string[],
    options?: RelationPageOptions,
  ) {
    return this.source(entity).findByAny(entity, field, values, options);
  }
  async list(entity: EntityName, options: PageOptions) {
    return this.source(entity).list(entity, options);
  }

  async close(): Promise<void> {
    this.projections.close();
    await this.primary.close();
  }
}

/** Opens the data directory for reading only: this handle cannot write. */
export function openReadStore(dataDir: string): SqliteReadStore {
  const files = dataFiles(dataDir);
  return new SqliteReadStore(
    new SqlitePrimaryStore({ file: files.primary, readonly: true }),
    new ProjectionReader(files.projectionsDir),
  );
}
