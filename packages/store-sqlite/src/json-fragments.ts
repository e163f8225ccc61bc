import type { EntityName } from '@eggmesh/schema';
import type { JsonList, JsonListField } from '@eggmesh/store';
import { AgedMap, dropOldest, SecondSight } from './aged-map.js';

/** How much a read-only primary keeps of rows' JSON fragments, by default. */
export const JSON_FRAGMENT_BYTES = 8 * 1024 * 1024;

/** What an entry costs beside its fragments' text (object, map, ticket), for the byte budget. */
const ENTRY_OVERHEAD = 64;

interface Entry {
  /** Payload text length in UTF-8 bytes (never less than its UTF-16 length), for a response's byte budget. */
  readonly payloadBytes: number;
  /** The row's JSON object per selection shape; null when a value does not have its field's type. */
  readonly shapes: Map<string, string | null>;
  size: number;
}

/** A fragment as SQLite built it: `[seq, JSON object or null (a value of another type), payload bytes]`. */
export type FragmentRow = [number, string | null, number];

/**
 * What a selection (a field list; the read side plans one per parsed document) is known by: `shape`,
 * its JSON, names it among a row's fragments and its statements, so equal lists share them; `id`, a
 * number never reused, names this list in a memo key in a few characters (two equal lists get two
 * numbers: a missed reuse, never a wrong answer).
 */
export interface Selection {
  readonly shape: string;
  readonly id: number;
}
const selections = new WeakMap<readonly JsonListField[], Selection>();
let nextSelectionId = 0;
export function selectionOf(fields: readonly JsonListField[]): Selection {
  let known = selections.get(fields);
  if (known === undefined) {
    known = { shape: JSON.stringify(fields), id: nextSelectionId++ };
    selections.set(fields, known);
  }
  return known;
}

const sqlText = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** The field's JSON path in a payload, as SQL text. */
const pathOf = (field: JsonListField) => sqlText(`$."${field.source}"`);
/** A field named `id` from the row's id (the only ID a plan takes): the row's id, not the payload's. */
const fromRowId = (field: JsonListField) => field.source === 'id' && field.type === 'id';

/**
 * True in SQL when the row's value of `field` is what serializing it under its GraphQL type gives back
 * unchanged: a string for ID and String, an integer of 32 bits for Int, a number for Float, true or
 * false for Boolean, and null or missing only where the field is nullable. Anything else (a number
 * stored for a String, 2^31 for an Int) makes the row's fragment null, and the list goes the ordinary
 * way, where GraphQL decides.
 */
function conformsSql(field: JsonListField): string {
  const path = pathOf(field);
  const type = `json_type(payload, ${path})`;
  const accepted = {
    id: ['text'],
    string: ['text'],
    int: ['integer'],
    float: ['integer', 'real'],
    boolean: ['true', 'false'],
  }[field.type];
  const test = `${field.nullable ? `coalesce(${type}, 'null')` : type} IN (${[...accepted, ...(field.nullable ? ['null'] : [])].map(sqlText).join(', ')})`;
  return field.type === 'int'
    ? `(${test} AND coalesce(payload ->> ${path}, 0) BETWEEN ${-(2 ** 31)} AND ${2 ** 31 - 1})`
    : test;
}

/**
 * The statement that builds the fragments of `fields` for the versions of `versions` whose `seq` is in
 * `?` (a JSON array), one `FragmentRow` each. SQLite copies each value's JSON text as stored (written
 * by `JSON.stringify`), so a fragment is byte for byte what `JSON.stringify` of the same object gives;
 * no payload is parsed in JavaScript.
 */
export function fragmentsSql(versions: string, fields: readonly JsonListField[]): string {
  const pairs = fields.map((f) => `${sqlText(f.key)}, ${fromRowId(f) ? 'id' : `payload -> ${pathOf(f)}`}`);
  const checks = fields.filter((f) => !fromRowId(f)).map(conformsSql);
  const object = `json_object(${pairs.join(', ')})`;
  const fragment = checks.length === 0 ? object : `CASE WHEN ${checks.join(' AND ')} THEN ${object} END`;
  return `SELECT seq, ${fragment}, octet_length(payload) FROM ${versions} WHERE seq IN (SELECT value FROM json_each(?))`;
}

/**
 * Each row's JSON object for a selection, kept by the version row it was built from (`seq`: a new
 * version of a row is a new `seq`, and a `seq` never changes payload): a list answer is the versions
 * SQLite finds, the fragments of those already seen, and those of the others built by SQLite in one
 * statement (`fragmentsSql`). Nothing is served for a version other than the one the read found. Bounded by bytes;
 * the oldest entries go first, and once full a version is kept only from its second read
 * (`SecondSight`).
 */
export class JsonFragments {
  private readonly byEntity = new Map<EntityName, AgedMap<number, Entry>>();
  private bytes = 0;
  private readonly admission = new SecondSight<EntityName, number>();

  constructor(private readonly maxBytes = JSON_FRAGMENT_BYTES) {}

  /**
   * `versions`: the rows' version `seq`s in answer order; `build` makes the fragments of this selection
   * for some of them (see `fragmentsSql`).
   */
  list(
    entity: EntityName,
    fields: readonly JsonListField[],
    versions: readonly number[],
    build: (seqs: number[]) => FragmentRow[],
  ): JsonList {
    let entries = this.byEntity.get(entity);
    if (!entries) {
      entries = new AgedMap();
      this.byEntity.set(entity, entries);
    }
    const { shape } = selectionOf(fields);
    const rows = versions.length;
    const out = new Array<string>(rows);
    const refused: JsonList = { json: '', rows, payloadBytes: 0, conforming: false };
    let payloadBytes = 0;
    const missing: number[] = [];
    for (let i = 0; i < rows; i++) {
      const entry = entries.get(versions[i] as number);
      const json = entry?.shapes.get(shape);
      if (json === undefined) {
        missing.push(versions[i] as number);
        continue;
      }
      if (json === null) return refused;
      out[i] = json;
      payloadBytes += (entry as Entry).payloadBytes;
    }
    if (missing.length > 0) {
      const built = new Map<number, FragmentRow>();
      for (const row of build(missing)) built.set(row[0], row);
      for (let i = 0; i < rows; i++) {
        if (out[i] !== undefined) continue;
        const seq = versions[i] as number;
        const row = built.get(seq);
        // Read in the same transaction, so never missing; but never guess.
        if (row === undefined) return refused;
        const [, json, bytes] = row;
        this.remember(entity, entries, seq, shape, json, bytes);
        if (json === null) return refused;
        out[i] = json;
        payloadBytes += bytes;
      }
    }
    return { json: `[${out.join(',')}]`, rows, payloadBytes, conforming: true };
  }

  /**
   * Keeps the fragment of a version just built: beside the version's others when it is held, else
   * when it fits and, once full, when the version was read before.
   */
  private remember(
    entity: EntityName,
    entries: AgedMap<number, Entry>,
    seq: number,
    shape: string,
    json: string | null,
    payloadBytes: number,
  ): void {
    const added = json?.length ?? 0;
    const held = entries.get(seq);
    if (held !== undefined) {
      // A version never changes: its fragments of other selections stay right.
      if (!held.shapes.has(shape)) {
        held.shapes.set(shape, json);
        held.size += added;
        this.bytes += added;
      }
      return;
    }
    const size = ENTRY_OVERHEAD + added;
    if (size > this.maxBytes) return;
    if (this.bytes + size > this.maxBytes && !this.admission.again(entity, seq)) return;
    // Room first, so the new entry is never the oldest of its entity, dropped at once.
    dropOldest(
      [entries, ...this.byEntity.values()],
      (map) => map,
      () => this.bytes + size > this.maxBytes,
      (map, key) => {
        this.bytes -= map.get(key)?.size ?? 0;
        map.delete(key);
      },
    );
    entries.set(seq, { payloadBytes, shapes: new Map([[shape, json]]), size });
    this.bytes += size;
  }

  /** Entries and bytes held (tests). */
  get size(): { readonly entries: number; readonly bytes: number } {
    let held = 0;
    for (const entries of this.byEntity.values()) held += entries.size;
    return { entries: held, bytes: this.bytes };
  }
}
