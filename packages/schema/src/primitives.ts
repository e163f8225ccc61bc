import { z } from 'zod';

/** A UUID string (any RFC 9562 version; the write-api assigns v7 ids, or v4 with EGGMESH_ID_VERSION=4), stored in lower case. */
export const uuid = () => z.uuid().transform((value) => value.toLowerCase());

/**
 * The earliest year a date or time of a record may name: no hen, farm or egg report is older. The
 * latest is the write side's to say, by its clock (`EGGMESH_MAX_FUTURE_MS` for event timestamps).
 */
export const MIN_YEAR = 1900;

/** A date or date-time string whose year is MIN_YEAR (1900) or later: a pattern, so the API document says it. */
const FROM_MIN_YEAR = /^(19|[2-9][0-9])[0-9]{2}-/;
const yearMessage = `the year must be ${MIN_YEAR} or later`;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text a record holds: no NUL character and no lone UTF-16 surrogate (neither is text; stores and
 * clients truncate or mangle them).
 */
export const text = () =>
  z
    .string()
    // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the one character this rule refuses
    .regex(/^[^\u0000]*$/, { message: 'must not contain a NUL character' })
    .refine((value) => !LONE_SURROGATE.test(value), { message: 'must not contain a lone UTF-16 surrogate' });

/** A required name or label: text with at least one character that is not white space. */
export const label = () => text().regex(/\S/, { message: 'must not be empty or only white space' });

/** An ISO-8601 date-time with an offset or `Z`, e.g. `2026-11-22T06:30:00Z`, from the year MIN_YEAR. */
export const timestamp = () =>
  z.iso
    .datetime({ offset: true, abort: true })
    .refine((value) => FROM_MIN_YEAR.test(value), { message: yearMessage })
    .meta({ pattern: FROM_MIN_YEAR.source });

/** A birth year from MIN_YEAR to 2099: a pattern, so the API document says it. */
const BIRTH_YEAR = /^(19|20)[0-9]{2}-/;

/** A date of birth: a calendar date from MIN_YEAR-01-01 to 2099-12-31. */
export const birthDate = () =>
  z.iso
    .date({ abort: true })
    .refine((value) => BIRTH_YEAR.test(value), { message: `the year must be from ${MIN_YEAR} to 2099` })
    .meta({ pattern: BIRTH_YEAR.source });

/** The largest integer an entity field takes: GraphQL `Int` is 32-bit signed. */
export const MAX_INT = 2_147_483_647;

/** An entity integer 0..2^31-1. */
export const nonNegativeInt = () => z.int().min(0).max(MAX_INT);
/** An entity integer 1..2^31-1. */
export const positiveInt = () => z.int().min(1).max(MAX_INT);
/** A projection counter: an exact integer 0..2^53-1 (GraphQL `SafeInt` on the read side). */
export const counter = () => z.int().min(0).max(Number.MAX_SAFE_INTEGER);

/** Every payload may carry its own id; the server assigns one when it is absent. */
export const idField = { id: uuid().optional() };
