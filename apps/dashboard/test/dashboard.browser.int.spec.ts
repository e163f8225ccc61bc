// The national dashboard in a real headless Chromium (Debian's), on the public port of a stack started as
// `pnpm start` runs it and seeded by `pnpm seed`: it shows the numbers the GraphQL API answers, and a lay
// report written through the REST API moves them without a reload (over the graphql-ws subscription).
// Then the same with EGGMESH_AUTH_READS: the page asks for a token and shows the API's own message.

import { statSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, watchedPage } from '../../../infra/test/browser.js';
import { CHROMIUM_ARGS, chromiumPath } from '../../../infra/test/chromium.js';
import { STARTUP_MS } from '../../../infra/test/patience.js';
import {
  authStack,
  type SharedStack,
  screenshotDir,
  seededStack,
} from '../../../infra/test/shared-stacks.js';
import { hs256 } from '../../../services/write-api/test/jwt.js';

/** How long a number may take to show on a loaded machine: a bound on a hang, not a speed test. */
const PATIENCE_MS = 60_000;

interface Answer<T> {
  data?: T;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

interface Summary {
  farms: number;
  'eggs-week': number;
  'active-hens': number;
  'eggs-per-hen': number;
}

/** The summary cards' numbers, computed here from the API's own answers. */
async function expectedSummary(base: string, zone: string, headers: Record<string, string> = {}) {
  const { farms, farmOutputs } = await gql<{
    farms: Array<{ id: string; zone: string }>;
    farmOutputs: Array<{ farm_id: string; eggs_week: number; active_hens: number }>;
  }>(
    base,
    '{ farms(limit: 10000) { id zone } farmOutputs(limit: 10000) { farm_id eggs_week active_hens } }',
    { headers },
  );
  const ids = new Set(farms.filter((f) => zone === '' || f.zone === zone).map((f) => f.id));
  const outputs = farmOutputs.filter((o) => ids.has(o.farm_id));
  const eggs = outputs.reduce((n, o) => n + o.eggs_week, 0);
  const hens = outputs.reduce((n, o) => n + o.active_hens, 0);
  return {
    farms: ids.size,
    'eggs-week': eggs,
    'active-hens': hens,
    'eggs-per-hen': hens === 0 ? 0 : Math.round((eggs / hens) * 100) / 100,
  } satisfies Summary;
}

/** What the summary cards show: their data-value, checked against their text. */
async function shownSummary(page: Page): Promise<Summary> {
  const cards = await page.$$eval('[data-stat]', (els) =>
    els.map((el) => [el.getAttribute('data-stat'), el.getAttribute('data-value'), el.textContent] as const),
  );
  const summary: Record<string, number> = {};
  for (const [key, value, text] of cards) {
    const n = Number(value);
    expect(text).toBe(n.toLocaleString('en-US', { minimumFractionDigits: key === 'eggs-per-hen' ? 2 : 0 }));
    summary[String(key)] = n;
  }
  return summary as unknown as Summary;
}

/** Waits until the summary card `key` shows `value` (polling the DOM). */
async function cardShows(page: Page, key: string, value: number): Promise<void> {
  await page.waitForFunction(
    (k, v) => document.querySelector(`[data-stat="${k}"]`)?.getAttribute('data-value') === String(v),
    { timeout: PATIENCE_MS, polling: 100 },
    key,
    value,
  );
}

/**
 * Waits until the status line starts with `wanted` (watching every change of the page); on a timeout it
 * says what the page shows instead, its status and error lines.
 */
async function statusShows(page: Page, wanted: string): Promise<void> {
  try {
    await page.waitForFunction(
      (w) => document.getElementById('status')?.textContent?.startsWith(w),
      { timeout: PATIENCE_MS, polling: 'mutation' },
      wanted,
    );
  } catch (error) {
    const [status, shown] = await page.evaluate(() => [
      document.getElementById('status')?.textContent,
      document.getElementById('error')?.textContent,
    ]);
    throw new Error(`the status never showed "${wanted}": it shows "${status}", the error line "${shown}"`, {
      cause: error,
    });
  }
}

let browser: Browser;
beforeAll(async () => {
  browser = await puppeteer.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
});

describe('the national dashboard in a browser (pnpm start, seeded)', () => {
  let stack: SharedStack;
  let position = 0;

  beforeAll(async () => {
    stack = await seededStack();
    position = stack.position;
    expect(position).toBeGreaterThan(0);
  });

  it('shows the API answers, then moves with a lay report without a reload; zone filter; screenshots', async () => {
    const base = stack.urls.public;
    const caughtUp = { 'x-min-position': String(position) };
    const expected = await expectedSummary(base, '', caughtUp);
    expect(expected.farms).toBeGreaterThan(0);
    expect(expected['eggs-week']).toBeGreaterThan(0);

    const { page, foreign, problems } = await watchedPage(browser, new URL(base).origin);
    await page.setViewport({ width: 1280, height: 800 });
    const response = await page.goto(`${base}/dashboard/`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await statusShows(page, 'Live');
    expect(await shownSummary(page)).toEqual(expected);
    // The zone filter is the first stop of the keyboard, with a visible focus ring.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('zone');
    expect(await page.$eval('#zone', (el) => getComputedStyle(el).outlineStyle)).toBe('solid');
    // Reads are open here: no token is asked for, no error shown.
    expect(await page.$eval('#token-form', (el) => el.checkVisibility())).toBe(false);
    expect(await page.$eval('#error', (el) => el.checkVisibility())).toBe(false);
    // The other panels are drawn from the same read: one bar per farm type, the top farms, the reports.
    const farmTypes = await page.$$eval('#farm-types svg g', (gs) => gs.length);
    expect(farmTypes).toBeGreaterThan(0);
    expect(await page.$$eval('#top-farms svg g', (gs) => gs.length)).toBe(Math.min(10, expected.farms));
    expect(await page.$$eval('#latest tbody tr', (rows) => rows.length)).toBeGreaterThan(0);

    // A lay report through the public REST API: the page was not reloaded, its number moved.
    await page.evaluate(() => {
      (window as unknown as { stillHere: boolean }).stillHere = true;
    });
    const { hens } = await gql<{ hens: Array<{ id: string; coop: { id: string; farm_id: string } }> }>(
      base,
      '{ hens(limit: 1) { id coop { id farm_id } } }',
    );
    const hen = hens[0]!;
    const written = await fetch(`${base}/lay_report/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        hen_id: hen.id,
        coop_id: hen.coop.id,
        farm_id: hen.coop.farm_id,
        eggs: 7,
        quality: 'grade_a',
        timestamp: new Date().toISOString(),
      }),
    });
    expect(written.status).toBe(201);
    await cardShows(page, 'eggs-week', expected['eggs-week'] + 7);
    expect(await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
    const after = await expectedSummary(base, '', {
      'x-min-position': String(written.headers.get('x-log-position')),
    });
    expect(after['eggs-week']).toBe(expected['eggs-week'] + 7);
    expect(await shownSummary(page)).toEqual(after);

    // The zone filter: the numbers of that zone alone, as the API answers them.
    const { farm } = await gql<{ farm: { zone: string } }>(
      base,
      `{ farm(id: "${hen.coop.farm_id}") { zone } }`,
    );
    const zoned = await expectedSummary(base, farm.zone);
    await page.select('#zone', farm.zone);
    await cardShows(page, 'farms', zoned.farms);
    expect(await shownSummary(page)).toEqual(zoned);
    expect(new URL(page.url()).searchParams.get('zone')).toBe(farm.zone);
    await page.select('#zone', '');
    await cardShows(page, 'farms', after.farms);

    // The read-api dies (the supervisor starts it again): the page reconnects on its own and follows on.
    const pidOf = async () => ((await (await fetch(`${base}/health`)).json()) as { pid: number }).pid;
    const first = await pidOf();
    process.kill(first, 'SIGKILL');
    await statusShows(page, 'Reconnecting…');
    const deadline = Date.now() + STARTUP_MS;
    while ((await pidOf().catch(() => first)) === first) {
      if (Date.now() > deadline) throw new Error('the supervisor did not start the read-api again');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await statusShows(page, 'Live');
    const again = await fetch(`${base}/lay_report/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        hen_id: hen.id,
        coop_id: hen.coop.id,
        farm_id: hen.coop.farm_id,
        eggs: 3,
        timestamp: new Date().toISOString(),
      }),
    });
    expect(again.status).toBe(201);
    await cardShows(page, 'eggs-week', after['eggs-week'] + 3);
    expect(await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);

    const screenshots = screenshotDir();
    await page.screenshot({ path: `${screenshots}dashboard-desktop.png` });
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
    await cardShows(page, 'farms', after.farms);
    // At phone width nothing is wider than the screen (no sideways scrolling of the page).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: `${screenshots}dashboard-phone.png` });
    for (const name of ['dashboard-desktop.png', 'dashboard-phone.png']) {
      expect(statSync(`${screenshots}${name}`).size).toBeGreaterThan(5000);
    }

    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('the national dashboard with EGGMESH_AUTH_READS', () => {
  let stack: SharedStack & { secret: string };
  let secret = '';

  beforeAll(async () => {
    stack = await authStack();
    secret = stack.secret;
  });

  it("asks for a token, shows the API's refusal, then reads and follows live with a good one", async () => {
    const base = stack.urls.public;
    const { page, foreign, problems } = await watchedPage(browser, new URL(base).origin);
    await page.goto(`${base}/dashboard/`, { waitUntil: 'load' });
    await page.waitForSelector('#token-form', { visible: true, timeout: PATIENCE_MS });
    const refused = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ farms { id } }' }),
    });
    const refusal = ((await refused.json()) as Answer<unknown>).errors?.[0]?.message;
    expect(refusal).toBeTruthy();
    expect(await page.$eval('#error', (el) => el.textContent)).toBe(refusal);

    // A token without the read scope: the API's 403 message is shown.
    await page.type('#token', hs256(secret, { sub: 'writer', scope: 'eggmesh:write' }));
    await page.click('#token-form button');
    await page.waitForFunction(
      (before) => document.getElementById('error')?.textContent !== before,
      {},
      refusal,
    );
    const forbidden = await page.$eval('#error', (el) => el.textContent ?? '');
    expect(forbidden).toContain('eggmesh:read');

    const reader = hs256(secret, {
      sub: 'reader',
      scope: 'eggmesh:read',
      exp: Math.floor(Date.now() / 1000) + 3600,
    });
    await page.$eval('#token', (el) => {
      (el as HTMLInputElement).value = '';
    });
    await page.type('#token', reader);
    await page.click('#token-form button');
    await statusShows(page, 'Live');
    expect(await page.$eval('#token-form', (el) => el.checkVisibility())).toBe(false);
    expect(await page.$eval('#error', (el) => el.checkVisibility())).toBe(false);
    // The farms the other browser test files wrote on this stack, as the API counts them.
    const { farms: before } = await expectedSummary(base, '', { authorization: `Bearer ${reader}` });
    await cardShows(page, 'farms', before);

    // A farm written with a write token arrives over the subscription the token opened.
    const writer = hs256(secret, { sub: 'writer', scope: 'eggmesh:write' });
    const created = await fetch(`${base}/farm/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
      body: JSON.stringify({ name: 'Token Farm', farm_type: 'homestead', zone: 'north' }),
    });
    expect(created.status).toBe(201);
    await cardShows(page, 'farms', before + 1);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
