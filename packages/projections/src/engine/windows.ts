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

/**
 * Eggs per UTC day, as flat pairs `[day, eggs, day, eggs, …]`: days ascending and distinct, eggs > 0.
 * Never changed in place (a new array per change). Stored as a JSON object `{"<day>": eggs}`
 * ({@link dayCountsRecord}); in memory it is an array because V8 keeps an object with integer keys
 * like 20417 as a dictionary, which made copying one for every lay report the projector's largest
 * single cost (5 µs against 0.2 µs for the array, 31 days).
 */
export type DayCounts = readonly number[];

/** No days. */
export const NO_DAYS: DayCounts = [];

/** The day counts of a stored day map: keys that are not whole day numbers, and eggs that are not finite numbers above 0, are dropped. */
export function dayCountsOf(value: unknown): DayCounts {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return NO_DAYS;
  const days: [number, number][] = [];
  for (const [key, eggs] of Object.entries(value)) {
    const day = Number(key);
    if (key === '' || !Number.isSafeInteger(day) || String(day) !== key) continue;
    if (typeof eggs === 'number' && Number.isFinite(eggs) && eggs > 0) days.push([day, eggs]);
  }
  days.sort((a, b) => a[0] - b[0]);
  return days.flat();
}

/** The stored form of `days`: day number (as a string key) → eggs. */
export function dayCountsRecord(days: DayCounts): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < days.length; i += 2) out[days[i]!] = days[i + 1]!;
  return out;
}

/** The stored form of `days` as JSON text: the same value as `JSON.stringify(dayCountsRecord(days))`. */
export function dayCountsJson(days: DayCounts): string {
  let json = '{';
  for (let i = 0; i < days.length; i += 2) json += `${i === 0 ? '' : ','}"${days[i]}":${days[i + 1]}`;
  return `${json}}`;
}

/**
 * `days` with `eggs` added to `day` (a day whose count reaches 0 disappears), and without the days
 * older than `dayOf(createdAt) - 30`: any reader of a document written at `createdAt` reads at a
 * reference time ≥ `createdAt`, so those days can never fall inside a window again.
 */
export function addDay(days: DayCounts, day: number, eggs: number, createdAt: number): DayCounts {
  const oldest = oldestKept(createdAt);
  let i = firstKept(days, oldest);
  const next: number[] = [];
  for (; i < days.length && days[i]! < day; i += 2) next.push(days[i]!, days[i + 1]!);
  if (day >= oldest) {
    let before = 0;
    if (i < days.length && days[i] === day) {
      before = days[i + 1]!;
      i += 2;
    }
    const after = addCount(before, eggs);
    if (after > 0) next.push(day, after);
  }
  for (; i < days.length; i += 2) next.push(days[i]!, days[i + 1]!);
  return next;
}

/** `days` without the days older than `dayOf(createdAt) - 30` (see {@link addDay}). */
export function pruneDays(days: DayCounts, createdAt: number): DayCounts {
  const i = firstKept(days, oldestKept(createdAt));
  return i === 0 ? days : days.slice(i);
}

/** The oldest day a document written at `createdAt` keeps. */
const oldestKept = (createdAt: number): number => dayOf(createdAt) - 30;

/** Where the pairs of `days` from `oldest` on start. */
function firstKept(days: DayCounts, oldest: number): number {
  let i = 0;
  while (i < days.length && days[i]! < oldest) i += 2;
  return i;
}

/** Egg sums over the calendar-day (UTC) windows that end on the reference day. */
export interface WindowSums {
  today: number;
  week: number;
  month: number;
  last28: number;
}

/**
 * Sums `days` over the windows ending at `ref` (epoch ms): today = day r, week = r-6..r,
 * month = r-29..r, last28 = r-27..r. Days after r never count.
 */
export function windowSums(days: DayCounts, ref: number): WindowSums {
  const r = dayOf(ref);
  const sums: WindowSums = { today: 0, week: 0, month: 0, last28: 0 };
  for (let i = 0; i < days.length; i += 2) {
    const age = r - days[i]!;
    if (!(age >= 0 && age < 30)) continue;
    const eggs = days[i + 1]!;
    sums.month = addCount(sums.month, eggs);
    if (age < 28) sums.last28 = addCount(sums.last28, eggs);
    if (age < 7) sums.week = addCount(sums.week, eggs);
    if (age === 0) sums.today = addCount(sums.today, eggs);
  }
  return sums;
}

/** Rounds to 4 decimal places so stored and served numbers stay stable. */
export const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

// The last timestamp parsed: every projection fed by an event reads its day, so one parse serves them.
let lastTimestamp: string | null = null;
let lastDay: number | null = null;

/** The UTC day of an ISO timestamp (an event's `timestamp`), or null when it does not parse. */
export function dayOfTimestamp(timestamp: string | null): number | null {
  if (timestamp === null) return null;
  if (timestamp !== lastTimestamp) {
    const ms = Date.parse(timestamp);
    lastDay = Number.isFinite(ms) ? dayOf(ms) : null;
    lastTimestamp = timestamp;
  }
  return lastDay;
}
