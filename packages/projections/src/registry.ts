import { containerInventory } from './container-inventory/index.js';
import type {
  EffectSource,
  Payload,
  ProjectionDefinition,
  ProjectionEffect,
  Versioned,
} from './engine/projection.js';
import { dayOf } from './engine/windows.js';
import { farmOutput } from './farm-output/index.js';
import { henProductivity } from './hen-productivity/index.js';

/**
 * The projections, in catalogue order: one definition per projection entity of the catalogue
 * (a unit test holds the two lists equal). Everything that differs by projection is derived from
 * this list.
 */
export const projections = [containerInventory, henProductivity, farmOutput] as const;

type Registered = (typeof projections)[number];

/** The projection entities, in catalogue order. */
export type ProjectionName = Registered['name'];

/** The stored (internal) document type of each projection. */
export type DocOf = { readonly [P in Registered as P['name']]: ReturnType<P['empty']> };

/** A change a single event applies to one projection document. `eggs` may be negative: a retraction. */
export type Effect = ReturnType<Registered['effects']>[number];

/** A projection as the engine handles it: documents, effects and public documents of any type. */
export type RegisteredProjection = ProjectionDefinition<
  ProjectionName,
  object,
  ProjectionEffect<ProjectionName>,
  Record<string, unknown>
>;

/** The registered projections as the engine iterates them. */
export const registeredProjections: readonly RegisteredProjection[] = projections;

export const projectionNames: readonly ProjectionName[] = projections.map((p) => p.name);

const byName = Object.fromEntries(registeredProjections.map((p) => [p.name, p])) as {
  readonly [N in ProjectionName]: RegisteredProjection;
};

/** The definition of projection `name`. */
export const registeredProjection = (name: ProjectionName): RegisteredProjection => byName[name];

/** Decodes a stored document of projection `entity`. */
export function decodeDocument<N extends ProjectionName>(
  entity: N,
  stored: { readonly id: string; readonly payload: Payload; readonly live: boolean },
): Versioned<DocOf[N]> {
  return {
    doc: registeredProjection(entity).decode(stored.id, stored.payload) as DocOf[N],
    live: stored.live,
  };
}

/** The empty document of projection `entity` for `id` (what a document absent from the store starts as). */
export function emptyDocument<N extends ProjectionName>(entity: N, id: string): DocOf[N] {
  return registeredProjection(entity).empty(id) as DocOf[N];
}

/**
 * What a public document depends on of its reference time: the UTC day (the windows' only input).
 * Two reference times with the same key materialize every stored document alike.
 */
export const materializationKey = (ref: number): number => dayOf(ref);

/**
 * Turns a stored internal document into the public one as of `ref` (epoch ms).
 * Fields missing from `payload` (or mistyped) take their empty-document defaults.
 */
export function materialize(entity: ProjectionName, payload: Payload, ref: number): Record<string, unknown> {
  const p = registeredProjection(entity);
  return p.materialize(p.decode('', payload), ref);
}

/**
 * The projection effects of one log entry: the negated effects of `previous` (if any) followed by
 * the effects of `payload` (if any), each in registry order. Only events have effects.
 */
export function effectsOf(entry: EffectSource): Effect[] {
  const out: Effect[] = [];
  if (entry.previous !== null) {
    for (const p of registeredProjections)
      for (const e of p.effects(entry.entity, entry.previous)) out.push(p.negate(e) as Effect);
  }
  if (entry.payload !== null) {
    for (const p of registeredProjections)
      for (const e of p.effects(entry.entity, entry.payload)) out.push(e as Effect);
  }
  return out;
}
