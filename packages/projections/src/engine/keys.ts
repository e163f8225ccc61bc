import type { EntityName } from '@eggmesh/schema';
import type { ProjectionName } from '../registry.js';
import type { StateKind } from './actors.js';

/** The key of a document (entity, id), a state row (kind, id) or a ref list (kind, ref). */
export const foldKey = (a: string, b: string): string => `${a}\u0000${b}`;

/** Keys to load, deduplicated; `keys()` has the shape of the store's `ProjectionKeys`. */
export class KeySet {
  private readonly docs = new Map<string, { readonly entity: EntityName; readonly id: string }>();
  private readonly rows = new Map<string, { readonly kind: string; readonly id: string }>();
  private readonly refs = new Map<string, { readonly kind: string; readonly ref: string }>();

  document(entity: ProjectionName, id: string): void {
    const k = foldKey(entity, id);
    if (!this.docs.has(k)) this.docs.set(k, { entity, id });
  }
  state(kind: StateKind, id: string): void {
    const k = foldKey(kind, id);
    if (!this.rows.has(k)) this.rows.set(k, { kind, id });
  }
  byRef(kind: StateKind, ref: string): void {
    const k = foldKey(kind, ref);
    if (!this.refs.has(k)) this.refs.set(k, { kind, ref });
  }
  get size(): number {
    return this.docs.size + this.rows.size + this.refs.size;
  }
  keys() {
    return {
      documents: [...this.docs.values()],
      state: [...this.rows.values()],
      stateByRef: [...this.refs.values()],
    };
  }
}
