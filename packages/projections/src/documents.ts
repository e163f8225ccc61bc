import { emptyInventory, type InventoryDoc } from './inventory.js';
import type { ProjectionName } from './materialize.js';
import { emptyFarm, emptyHen, type FarmDoc, type HenDoc } from './productivity.js';
import { dayCountsJson, dayCountsOf, dayCountsRecord } from './windows.js';

/** The stored (internal) document type of each projection. */
export type DocOf = {
  readonly container_inventory: InventoryDoc;
  readonly hen_productivity: HenDoc;
  readonly farm_output: FarmDoc;
};

/** A projection document with whether its container/hen/farm is live (false: a tombstone). */
export interface Versioned<D> {
  readonly doc: D;
  readonly live: boolean;
}

type Payload = Record<string, unknown>;

const num = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;
const str = (value: unknown, fallback: string): string => (typeof value === 'string' ? value : fallback);
const strOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A stored container_inventory document; missing or mistyped fields take the empty document's values. */
export function decodeInventoryDoc(id: string, p: Payload): InventoryDoc {
  const empty = emptyInventory(str(p.container_id, id));
  return {
    container_id: empty.container_id,
    capacity: typeof p.capacity === 'number' && Number.isFinite(p.capacity) ? p.capacity : null,
    current_eggs: num(p.current_eggs, 0),
    total_deposits: num(p.total_deposits, 0),
    total_withdrawals: num(p.total_withdrawals, 0),
    total_transfers_in: num(p.total_transfers_in, 0),
    total_transfers_out: num(p.total_transfers_out, 0),
    total_consumed: num(p.total_consumed, 0),
    utilization_pct: num(p.utilization_pct, 0),
  };
}

/** A stored hen_productivity document; missing or mistyped fields take the empty document's values. */
export function decodeHenDoc(id: string, p: Payload): HenDoc {
  const empty = emptyHen(str(p.hen_id, id));
  return {
    hen_id: empty.hen_id,
    farm_id: strOrNull(p.farm_id),
    total_eggs: num(p.total_eggs, 0),
    good_eggs: num(p.good_eggs, 0),
    days: dayCountsOf(p.days),
  };
}

/** A stored farm_output document; missing or mistyped fields take the empty document's values. */
export function decodeFarmDoc(id: string, p: Payload): FarmDoc {
  const empty = emptyFarm(str(p.farm_id, id));
  return {
    farm_id: empty.farm_id,
    farm_type: str(p.farm_type, empty.farm_type),
    active_hens: num(p.active_hens, 0),
    total_hens: num(p.total_hens, 0),
    days: dayCountsOf(p.days),
  };
}

const docDecoders: { readonly [N in ProjectionName]: (id: string, payload: Payload) => DocOf[N] } = {
  container_inventory: decodeInventoryDoc,
  hen_productivity: decodeHenDoc,
  farm_output: decodeFarmDoc,
};

/** Decodes a stored document of projection `entity`. */
export function decodeDocument<N extends ProjectionName>(
  entity: N,
  stored: { readonly id: string; readonly payload: Payload; readonly live: boolean },
): Versioned<DocOf[N]> {
  return { doc: docDecoders[entity](stored.id, stored.payload), live: stored.live };
}

/** The empty document of projection `entity` for `id` (what a document absent from the store starts as). */
export function emptyDocument<N extends ProjectionName>(entity: N, id: string): DocOf[N] {
  return docDecoders[entity](id, {});
}

/**
 * The stored form of a document: what `decodeDocument` reads back. Only the day counts differ from the
 * in-memory document (an object keyed by day number instead of flat pairs).
 */
export function storedDocument(doc: DocOf[ProjectionName]): Record<string, unknown> {
  if (!('days' in doc)) return { ...doc };
  return { ...doc, days: dayCountsRecord(doc.days) };
}

/**
 * The stored form of a document as JSON text: the same JSON value as
 * `JSON.stringify(storedDocument(doc))`, written without building the day object.
 */
export function documentJson(doc: DocOf[ProjectionName]): string {
  if (!('days' in doc)) return JSON.stringify(doc);
  const { days, ...rest } = doc;
  // `rest` always has its id field, so its JSON ends in a value followed by `}`.
  return `${JSON.stringify(rest).slice(0, -1)},"days":${dayCountsJson(days)}}`;
}
