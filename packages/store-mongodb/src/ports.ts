// The round-3 port shapes (/work/briefs/ports.ts) until @eggmesh/store exports them; replaced by
// imports from '@eggmesh/store' once the ports land there.
import type { EntityName } from '@eggmesh/schema';
import type {
  EntityReader,
  LogEntry,
  ProjectionDocument,
  ProjectionStateRow,
  ProjectionWrite,
} from '@eggmesh/store';

export interface EventLogPort {
  read(after: number, limit: number): Promise<LogEntry[]>;
  head(): Promise<number>;
  waitBeyond(after: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  acknowledge(position: number): Promise<void>;
  close(): Promise<void>;
}

export interface ProjectionKeys {
  readonly documents: ReadonlyArray<{ readonly entity: EntityName; readonly id: string }>;
  readonly state: ReadonlyArray<{ readonly kind: string; readonly id: string }>;
  readonly stateByRef: ReadonlyArray<{ readonly kind: string; readonly ref: string }>;
}

export interface LoadedProjections {
  readonly checkpoint: number;
  readonly documents: ReadonlyMap<string, ProjectionDocument>;
  readonly state: ReadonlyMap<string, ProjectionStateRow>;
  readonly stateByRef: ReadonlyMap<string, readonly ProjectionStateRow[]>;
}

export interface ProjectionCommit {
  readonly expectedCheckpoint: number;
  readonly checkpoint: number;
  readonly documents: readonly ProjectionWrite[];
  readonly state: readonly ProjectionStateRow[];
}

export interface ProjectionStorePort {
  checkpoint(): Promise<number>;
  load(keys: ProjectionKeys): Promise<LoadedProjections>;
  commit(batch: ProjectionCommit): Promise<void>;
  close(): Promise<void>;
}

export interface ReadStorePort extends EntityReader {
  replicaPosition(): Promise<number>;
  projectionPosition(): Promise<number>;
  changed(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
