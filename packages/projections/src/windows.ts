/** The largest counter value: counters are exact integers 0..2^53-1 (GraphQL `SafeInt`). */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/**
 * `a + b` kept within 0..MAX_COUNT. Past 2^53 a double sum is no longer exact, so a counter
 * saturates at MAX_COUNT instead (a later retraction then counts down from MAX_COUNT).
 */
export const addCount = (a: number, b: number): number => Math.min(MAX_COUNT, Math.max(0, a + b));

/** Milliseconds in one UTC day. */
export const DAY_MS = 86_400_000;

/** The UTC day number of an epoch-ms instant (day 0 = 1970-01-01). */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/** Egg sums over the calendar-day (UTC) windows that end on the reference day. */
export interface WindowSums {
  today: number;
  week: number;
  month: number;
  last28: number;
}

/**
 * Sums a day map (key = `String(dayOf(...))`) over the windows ending at `ref` (epoch ms):
 * today = day r, week = r-6..r, month = r-29..r, last28 = r-27..r. Days after r never count.
 */
export function windowSums(days: Record<string, number>, ref: number): WindowSums {
  const r = dayOf(ref);
  const sums: WindowSums = { today: 0, week: 0, month: 0, last28: 0 };
  for (const [key, eggs] of Object.entries(days)) {
    const age = r - Number(key);
    // Non-numeric keys give NaN and fail every comparison.
    if (!(age >= 0 && age < 30)) continue;
    sums.month = addCount(sums.month, eggs);
    if (age < 28) sums.last28 = addCount(sums.last28, eggs);
    if (age < 7) sums.week = addCount(sums.week, eggs);
    if (age === 0) sums.today = addCount(sums.today, eggs);
  }
  return sums;
}

/**
 * Drops days older than `dayOf(createdAt) - 30`. Any reader of a document written at `createdAt`
 * reads at a reference time ≥ `createdAt`, so those days can never fall inside a window again.
 */
export function pruneDays(days: Record<string, number>, createdAt: number): Record<string, number> {
  const oldest = dayOf(createdAt) - 30;
  const kept: Record<string, number> = {};
  for (const [key, eggs] of Object.entries(days)) {
    if (Number(key) < oldest) continue;
    kept[key] = eggs;
  }
  return kept;
}

/** Rounds to 4 decimal places so stored and served numbers stay stable. */
export const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;
