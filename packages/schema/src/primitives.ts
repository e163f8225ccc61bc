import { z } from 'zod';

/** A UUID string (any RFC 4122 variant; the server assigns v4 ids), stored in lower case. */
export const uuid = () => z.uuid().transform((value) => value.toLowerCase());

/** An ISO-8601 date-time with an offset or `Z`, e.g. `2026-11-22T06:30:00Z`. */
export const timestamp = () => z.iso.datetime({ offset: true });

/** A calendar date `YYYY-MM-DD`. */
export const date = () => z.iso.date();

export const nonNegativeInt = () => z.int().min(0);
export const positiveInt = () => z.int().min(1);

/** Every payload may carry its own id; the server assigns one when it is absent. */
export const idField = { id: uuid().optional() };
