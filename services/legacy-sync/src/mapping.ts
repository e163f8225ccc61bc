import type { EntityName } from '@eggmesh/schema';
import { v5 as uuidv5 } from 'uuid';

/** A legacy row as Debezium's JSON converter carries it (column names in lower case). */
export type Row = Readonly<Record<string, unknown>>;

/**
 * How one clean field is made from a row. `column`: the value as it is (trimmed text); `codes`: a code
 * map (a value the map lacks is a data problem: the row dead-letters); `ref`: the id of the row of
 * `table` whose key is `columns` (the child waits until that parent has been applied; with `by`, the
 * code in that column names the parent's table); `via`: a field
 * of an applied parent (a lay report's coop is its hen's coop); `int`: an integer column; `date`: a
 * `YYYYMMDD` column as `YYYY-MM-DD`; `instant`: date and time columns (`YYYYMMDD` + `HHMMSS`, UTC) or
 * one timestamp column, as ISO-8601 UTC.
 */
export type FieldRule =
  | { readonly column: string; readonly optional?: boolean }
  | { readonly column: string; readonly codes: Readonly<Record<string, string>>; readonly optional?: boolean }
  | { readonly ref: string; readonly columns: readonly string[] }
  | {
      readonly ref: Readonly<Record<string, string>>;
      readonly by: string;
      readonly columns: readonly string[];
    }
  | { readonly via: string; readonly field: string }
  | { readonly int: string; readonly optional?: boolean }
  | { readonly date: string; readonly optional?: boolean }
  | { readonly instant: readonly [string] | readonly [string, string] }
  | { readonly constant: string };

/** One legacy table: which entity it feeds, its key, and a rule for each clean field. */
export interface TableMapping {
  readonly table: string;
  readonly entity: EntityName;
  /** Key columns after the client column; with the client and the source they make the id. */
  readonly key: readonly string[];
  readonly fields: Readonly<Record<string, FieldRule>>;
  /** A soft-delete flag column: a row with it true is a delete (Salesforce's IsDeleted). */
  readonly deletedFlag?: string;
}

/** A legacy source: its name, its client column and the one client that is production data. */
export interface SourceMapping {
  readonly source: string;
  /** The column that names the client (SAP's MANDT); rows of other clients are ignored. */
  readonly client?: { readonly column: string; readonly value: string };
  readonly tables: readonly TableMapping[];
}

/** The namespace of every eggmesh id made from a legacy key (a fixed, random UUID). */
export const LEGACY_NAMESPACE = '5b0e2c1a-4f7e-4d52-9a41-3c6f1e0b9d27';

/** The id of a legacy row: UUIDv5 of source, client and key, the same whenever and however often it arrives. */
export function legacyId(source: string, client: string, table: string, key: readonly string[]): string {
  return uuidv5([source, client, table.toLowerCase(), ...key].join('\u001f'), LEGACY_NAMESPACE);
}

const text = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined;
  const trimmed = String(value).trim();
  return trimmed === '' ? undefined : trimmed;
};

/** Why a row cannot become a clean record: it goes to the dead-letter topic with this reason. */
export class Unmappable extends Error {}

export interface Mapped {
  readonly id: string;
  /** The clean record without the fields that come from parents (`via`). */
  readonly record: Record<string, unknown>;
  /** Parent ids this record names: it is written only once each of them has been applied. */
  readonly parents: readonly string[];
  /** Fields to copy from applied parents: field → [parent id, parent field]. */
  readonly inherited: Readonly<Record<string, readonly [string, string]>>;
}

/** The key values of a row (after the client), trimmed. */
export function keyOf(mapping: TableMapping, row: Row): string[] {
  return mapping.key.map((column) => {
    const value = text(row[column]);
    if (value === undefined) throw new Unmappable(`key column ${column} is empty`);
    return value;
  });
}

/** Maps one legacy row to its clean record; throws Unmappable for an unknown code or an impossible row. */
export function mapRow(source: SourceMapping, mapping: TableMapping, client: string, row: Row): Mapped {
  const id = legacyId(source.source, client, mapping.table, keyOf(mapping, row));
  const record: Record<string, unknown> = {};
  const parents: string[] = [];
  const refIds: Record<string, string> = {};
  const inherited: Record<string, readonly [string, string]> = {};
  for (const [field, rule] of Object.entries(mapping.fields)) {
    if ('ref' in rule) {
      let table: string;
      if (typeof rule.ref === 'string') table = rule.ref;
      else {
        const code = 'by' in rule ? text(row[rule.by]) : undefined;
        const named = code === undefined ? undefined : rule.ref[code];
        if (named === undefined) throw new Unmappable(`${field}: no parent table for code '${code ?? ''}'`);
        table = named;
      }
      const key = rule.columns.map((column) => text(row[column]));
      if (key.some((part) => part === undefined))
        throw new Unmappable(`${field}: reference ${rule.columns.join('+')} is empty`);
      const parent = legacyId(source.source, client, table, key as string[]);
      record[field] = parent;
      refIds[field] = parent;
      parents.push(parent);
    } else if ('via' in rule) {
      const parent = refIds[rule.via];
      if (!parent)
        throw new Error(`mapping ${mapping.table}.${field}: via ${rule.via} names no reference before it`);
      inherited[field] = [parent, rule.field];
    } else if ('codes' in rule) {
      const code = text(row[rule.column]);
      if (code === undefined) {
        if (rule.optional) continue;
        throw new Unmappable(`${rule.column} is empty`);
      }
      const value = rule.codes[code];
      if (value === undefined) throw new Unmappable(`${rule.column}: unknown code '${code}'`);
      record[field] = value;
    } else if ('column' in rule) {
      const value = text(row[rule.column]);
      if (value === undefined) {
        if (rule.optional) continue;
        throw new Unmappable(`${rule.column} is empty`);
      }
      record[field] = value;
    } else if ('int' in rule) {
      const value = text(row[rule.int]);
      if (value === undefined) {
        if (rule.optional) continue;
        throw new Unmappable(`${rule.int} is empty`);
      }
      const number = Number(value);
      if (!Number.isSafeInteger(number)) throw new Unmappable(`${rule.int}: '${value}' is not an integer`);
      record[field] = number;
    } else if ('date' in rule) {
      const value = text(row[rule.date]);
      if (value === undefined || value === '00000000') {
        if (rule.optional) continue;
        throw new Unmappable(`${rule.date} is empty`);
      }
      record[field] = isoDate(rule.date, value);
    } else if ('instant' in rule) {
      record[field] = instant(rule.instant, row);
    } else {
      record[field] = rule.constant;
    }
  }
  return { id, record, parents, inherited };
}

/** `YYYYMMDD` (SAP) or days since the epoch (Debezium's DATE) as `YYYY-MM-DD`. */
function isoDate(column: string, value: string): string {
  if (/^\d{8}$/.test(value)) {
    const iso = `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}`;
    if (
      Number.isNaN(Date.parse(`${iso}T00:00:00Z`)) ||
      new Date(`${iso}T00:00:00Z`).toISOString().slice(0, 10) !== iso
    ) {
      throw new Unmappable(`${column}: '${value}' is no date`);
    }
    return iso;
  }
  if (/^-?\d+$/.test(value)) return new Date(Number(value) * 86_400_000).toISOString().slice(0, 10);
  throw new Unmappable(`${column}: '${value}' is no date`);
}

function instant(columns: readonly [string] | readonly [string, string], row: Row): string {
  const [dateColumn, timeColumn] = columns;
  const date = text(row[dateColumn]);
  if (date === undefined) throw new Unmappable(`${dateColumn} is empty`);
  if (timeColumn === undefined) {
    // One timestamp column: Debezium sends TIMESTAMPTZ as an ISO string, or epoch ms as a number.
    const ms = /^\d+$/.test(date) ? Number(date) : Date.parse(date);
    if (Number.isNaN(ms)) throw new Unmappable(`${dateColumn}: '${date}' is no timestamp`);
    return new Date(ms).toISOString();
  }
  const time = text(row[timeColumn]) ?? '000000';
  if (
    !/^\d{6}$/.test(time) ||
    Number(time.slice(0, 2)) > 23 ||
    Number(time.slice(2, 4)) > 59 ||
    Number(time.slice(4)) > 59
  ) {
    throw new Unmappable(`${timeColumn}: '${time}' is no time`);
  }
  const day = isoDate(dateColumn, date);
  return `${day}T${time.slice(0, 2)}:${time.slice(2, 4)}:${time.slice(4, 6)}.000Z`;
}
