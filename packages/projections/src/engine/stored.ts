import { type DayCounts, dayCountsJson, dayCountsRecord } from './windows.js';

/**
 * The stored form of a document: what the projection's `decode` reads back. Only the day counts
 * (a document's `days` field) differ from the in-memory document: an object keyed by day number
 * instead of flat pairs.
 */
export function storedDocument(doc: object): Record<string, unknown> {
  if (!('days' in doc)) return { ...doc };
  return { ...doc, days: dayCountsRecord(doc.days as DayCounts) };
}

/**
 * The stored form of a document as JSON text: the same JSON value as
 * `JSON.stringify(storedDocument(doc))`, written without building the day object.
 */
export function documentJson(doc: object): string {
  if (!('days' in doc)) return JSON.stringify(doc);
  const { days, ...rest } = doc as { readonly days: DayCounts };
  // `rest` always has its id field, so its JSON ends in a value followed by `}`.
  return `${JSON.stringify(rest).slice(0, -1)},"days":${dayCountsJson(days)}}`;
}
