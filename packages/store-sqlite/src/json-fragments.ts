import type { EntityName } from '@eggmesh/schema';
import type { JsonList, JsonListField } from '@eggmesh/store';
import { AgedMap, dropOldest } from './aged-map.js';

/** How much a read-only primary keeps of rows' payloads and JSON fragments, by default. */
export const JSON_FRAGMENT_BYTES = 8 * 1024 * 1024;

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

interface Entry {
  readonly id: string;
  readonly payload: Record<string, unknown>;
  /** Payload text length, for the byte budget of a response. */
  readonly payloadBytes: number;
  /** The row's JSON object per selection shape; null when a value does not have its field's type. */
  readonly shapes: Map<string, string | null>;
  size: number;
}

/** A value as serializing it under its GraphQL type gives it, or undefined when that type refuses it. */
function conforms(field: JsonListField, value: unknown): boolean {
  if (value === undefined || value === null) return field.nullable;
  switch (field.type) {
    case 'id':
    case 'string':
      return typeof value === 'string';
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) && value >= INT_MIN && value <= INT_MAX;
    case 'float':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
  }
}

const shapeKeys = new WeakMap<readonly JsonListField[], string>();
const shapeOf = (fields: readonly JsonListField[]): string => {
  let key = shapeKeys.get(fields);
  if (key === undefined) {
    key = JSON.stringify(fields);
    shapeKeys.set(fields, key);
  }
  return key;
};

/**
 * Each row's JSON object for a selection, kept by the version row it was built from (`seq`: a new
 * version of a row is a new `seq`, and a `seq` never changes payload): a list answer is the versions
 * SQLite finds, the fragments of those already seen, and the payloads of the others read in one
 * statement. Nothing is served for a version other than the one the read found. Bounded by bytes;
 * the oldest entries go first.
 */
export class JsonFragments {
  private readonly byEntity = new Map<EntityName, AgedMap<number, Entry>>();
  private bytes = 0;

  constructor(private readonly maxBytes = JSON_FRAGMENT_BYTES) {}

  /** `versions`: the rows' version `seq`s in answer order; `payloads` reads `[seq, id, payload]` of some. */
  list(
    entity: EntityName,
    fields: readonly JsonListField[],
    versions: readonly number[],
    payloads: (seqs: number[]) => Array<[number, string, string]>,
  ): JsonList {
    let entries = this.byEntity.get(entity);
    if (!entries) {
      entries = new AgedMap();
      this.byEntity.set(entity, entries);
    }
    const shape = shapeOf(fields);
    const rows = versions.length;
    const out = new Array<string>(rows);
    const refused: JsonList = { json: '', rows, payloadBytes: 0, conforming: false };
    let payloadBytes = 0;
    const missing: number[] = [];
    for (let i = 0; i < rows; i++) {
      const entry = entries.get(versions[i] as number);
      if (entry === undefined) {
        missing.push(versions[i] as number);
        continue;
      }
      const json = this.fragment(entry, fields, shape);
      if (json === null) return refused;
      out[i] = json;
      payloadBytes += entry.payloadBytes;
    }
    if (missing.length > 0) {
      // Kept here too: a list larger than the cache may push its own rows out of it.
      const read = new Map<number, Entry>();
      for (const [seq, id, text] of payloads(missing)) {
        const entry: Entry = {
          id,
          payload: JSON.parse(text) as Record<string, unknown>,
          payloadBytes: text.length,
          shapes: new Map(),
          size: text.length * 2 + id.length,
        };
        read.set(seq, entry);
        this.remember(entries, seq, entry);
      }
      for (let i = 0; i < rows; i++) {
        if (out[i] !== undefined) continue;
        const entry = read.get(versions[i] as number);
        // Read in the same transaction, so never missing; but never guess.
        if (entry === undefined) return refused;
        const json = this.fragment(entry, fields, shape);
        if (json === null) return refused;
        out[i] = json;
        payloadBytes += entry.payloadBytes;
      }
    }
    return { json: `[${out.join(',')}]`, rows, payloadBytes, conforming: true };
  }

  private fragment(entry: Entry, fields: readonly JsonListField[], shape: string): string | null {
    const known = entry.shapes.get(shape);
    if (known !== undefined) return known;
    const object: Record<string, unknown> = {};
    let json: string | null = null;
    let ok = true;
    for (const field of fields) {
      const value = field.source === 'id' && field.type === 'id' ? entry.id : entry.payload[field.source];
      if (!conforms(field, value)) {
        ok = false;
        break;
      }
      object[field.key] = value ?? null;
    }
    if (ok) json = JSON.stringify(object);
    entry.shapes.set(shape, json);
    const added = json?.length ?? 0;
    entry.size += added;
    this.bytes += added;
    return json;
  }

  private remember(entries: AgedMap<number, Entry>, seq: number, entry: Entry): void {
    const old = entries.get(seq);
    if (old) {
      entries.delete(seq);
      this.bytes -= old.size;
    }
    if (entry.size > this.maxBytes) return;
    entries.set(seq, entry);
    this.bytes += entry.size;
    // Oldest first: of this entity, then of the others.
    dropOldest(
      [entries, ...this.byEntity.values()],
      (map) => map,
      () => this.bytes > this.maxBytes,
      (map, key) => {
        this.bytes -= map.get(key)?.size ?? 0;
        map.delete(key);
      },
    );
  }
}
