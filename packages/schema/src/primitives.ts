import { z } from 'zod';

/** A UUID string (any RFC 9562 version; the write-api assigns v7 ids, or v4 with EGGMESH_ID_VERSION=4), stored in lower case. */
export const uuid = () => z.uuid().transform((value) => value.toLowerCase());

/** An ISO-8601 date-time with an offset or `Z`, e.g. `2026-11-22T06:30:00Z`. */
export const timestamp = () => z.iso.datetime({ offset: true });

/** A calendar date `YYYY-MM-DD`. */
export const date = () => z.iso.date();

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
