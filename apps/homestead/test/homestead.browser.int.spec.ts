// The homesteader's app in a real headless Chromium (Debian's) on the public port of a seeded stack
// (`pnpm start`, `pnpm seed`): it logs eggs online, then offline (the browser's network cut), and
// sends what it kept once the network is back; every report arrives once, a resend included.

import { statSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql } from '../../../infra/test/browser.js';
import { CHROMIUM_ARGS, chromiumPath } from '../../../infra/test/chromium.js';
import {
  authStack,
  type SharedStack,
  screenshotDir,
  seededStack,
} from '../../../infra/test/shared-stacks.js';
import { hs256 } from '../../../services/write-api/test/jwt.js';

/** How long the page may take on a loaded machine: a bound on a hang, not a speed test. */
const PATIENCE_MS = 60_000;

interface LayReport {
  id: string;
  eggs: number;
  quality: string | null;
}

/** The hen's lay reports as the API has them (after the write at `position` is readable). */
async function reportsOf(
  base: string,
  hen: string,
  headers: Record<string, string> = {},
): Promise<LayReport[]> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: `{ layReportsByHen(id: "${hen}", limit: 10000) { id eggs quality } }` }),
  });
  const answer = (await response.json()) as { data: { layReportsByHen: LayReport[] } };
  return answer.data.layReportsByHen;
}

/** Polls the API until the hen has `count` reports (the primary's REST read is immediate, GraphQL follows the replica). */
async function untilReports(
  base: string,
  hen: string,
  count: number,
  headers: Record<string, string> = {},
): Promise<LayReport[]> {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const reports = await reportsOf(base, hen, headers);
    if (reports.length >= count || Date.now() > deadline) return reports;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const queued = (page: Page, n: number) =>
  page.waitForFunction(
    (k) => document.getElementById('network')?.dataset.queued === String(k),
    { timeout: PATIENCE_MS },
    n,
  );

let browser: Browser;
beforeAll(async () => {
  browser = await puppeteer.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
});

describe('the homesteader app in a browser (pnpm start, seeded)', () => {
  let stack: SharedStack;

  // Starts once the projections hold every write so far, so the page and this test read the same week.
  beforeAll(async () => {
    stack = await seededStack();
  });

  it('logs eggs online and offline; the queue is sent once the network is back, each report once', async () => {
    const base = stack.urls.public;
    const origin = new URL(base).origin;
    const page = await browser.newPage();
    const problems: string[] = [];
    const foreign: string[] = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.origin !== origin && url.protocol !== 'data:') foreign.push(request.url());
    });
    const answers: number[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/lay_report/api') answers.push(response.status());
    });
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
    await page.goto(`${base}/homestead/`, { waitUntil: 'load' });

    // Pick the farm once: it is remembered.
    await page.waitForSelector('#farm-form', { visible: true, timeout: PATIENCE_MS });
    const farmId = await page.$eval('#farm', (el) => (el as HTMLSelectElement).options[0]!.value);
    await page.select('#farm', farmId);
    await page.click('#farm-form button');
    const card = await page.waitForSelector('[data-hen]', { timeout: PATIENCE_MS });
    const hen = (await card!.evaluate((el) => (el as HTMLElement).dataset.hen))!;
    const before = (await reportsOf(base, hen)).length;
    // The farm's week, as the projections have it.
    const week = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ farmOutputsByFarm(id: "${farmId}") { eggs_week } }` }),
    });
    const { farmOutputsByFarm } = (
      (await week.json()) as { data: { farmOutputsByFarm: Array<{ eggs_week: number }> } }
    ).data;
    expect(await page.$eval('#week', (el) => (el as HTMLElement).dataset.eggsWeek)).toBe(
      String(farmOutputsByFarm[0]!.eggs_week),
    );

    // Online: 3 eggs, double yolk.
    await page.click(`[data-hen="${hen}"] [data-step="1"]`);
    await page.click(`[data-hen="${hen}"] [data-step="1"]`);
    await page.select(`#q-${hen}`, 'double_yolk');
    await page.click(`[data-hen="${hen}"] [data-log]`);
    await queued(page, 0);
    const online = await untilReports(base, hen, before + 1);
    expect(online).toHaveLength(before + 1);
    expect(online.some((r) => r.eggs === 3 && r.quality === 'double_yolk')).toBe(true);

    // The service worker has the app's files for the next time there is no network.
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, { timeout: PATIENCE_MS });

    // Offline: two reports wait in the queue, none is lost.
    await page.setOfflineMode(true);
    await page.waitForFunction(() => !navigator.onLine, { timeout: PATIENCE_MS });
    await page.click(`[data-hen="${hen}"] [data-log]`);
    await page.click(`[data-hen="${hen}"] [data-step="1"]`);
    await page.click(`[data-hen="${hen}"] [data-log]`);
    await queued(page, 2);
    expect(await page.$eval('#network', (el) => el.textContent)).toBe(
      'Offline · 2 reports waiting to be sent',
    );
    // The app opens without a network: from the service worker's cache, with the farm's hens kept here.
    const offlinePage = await page.reload({ waitUntil: 'load' });
    expect(offlinePage?.fromServiceWorker()).toBe(true);
    await page.waitForSelector(`[data-hen="${hen}"]`, { timeout: PATIENCE_MS });
    await queued(page, 2);
    // Nothing left the queue unacknowledged: a report the API has beyond the online one is still queued
    // here. (Chromium's offline emulation can let the first request of a reloaded page through; its
    // answer never reaches the page, which keeps the report, and its resend below is a no-op.)
    const queuedIds = await page.evaluate(() =>
      (JSON.parse(localStorage.getItem('homestead.queue') ?? '[]') as Array<{ id: string }>).map((r) => r.id),
    );
    expect(queuedIds).toHaveLength(2);
    const reached = (await reportsOf(base, hen)).filter((r) => !online.some((o) => o.id === r.id));
    expect(queuedIds).toEqual(expect.arrayContaining(reached.map((r) => r.id)));

    const screenshots = screenshotDir();
    await page.screenshot({ path: `${screenshots}homestead-phone.png` });
    expect(statSync(`${screenshots}homestead-phone.png`).size).toBeGreaterThan(5000);

    // Back online: the queue is sent, each report once.
    await page.setOfflineMode(false);
    await queued(page, 0);
    const sent = await untilReports(base, hen, before + 3);
    expect(sent).toHaveLength(before + 3);
    expect(
      sent
        .filter((r) => !online.some((o) => o.id === r.id))
        .map((r) => r.eggs)
        .sort(),
    ).toEqual([1, 2]);

    // A resend (the phone lost the answer of a report the server had) is a no-op, never a duplicate.
    const kept = sent.find((r) => !online.some((o) => o.id === r.id))!;
    await page.evaluate(
      (report) => {
        localStorage.setItem('homestead.queue', JSON.stringify([report]));
      },
      {
        id: kept.id,
        hen_id: hen,
        coop_id: await page.$eval(`[data-hen="${hen}"]`, (el) => (el as HTMLElement).dataset.coop),
        farm_id: farmId,
        eggs: kept.eggs,
        quality: kept.quality,
        timestamp: new Date().toISOString(),
      },
    );
    answers.length = 0;
    await page.reload({ waitUntil: 'load' });
    await queued(page, 0);
    expect(answers).toEqual([409]);
    expect(await page.$eval('#error', (el) => el.checkVisibility())).toBe(false);
    expect(await reportsOf(base, hen)).toHaveLength(before + 3);

    // Add a coop, then a hen in it, through the app's forms (the public REST API): the hen's card shows.
    const coopName = 'Orchard coop';
    await page.click('#add summary');
    await page.type('#new-coop-name', coopName);
    await page.click('#coop-form button[type=submit]');
    await page.waitForFunction(
      () => document.querySelector('#coop-form .outcome')?.textContent?.startsWith('Added'),
      { timeout: PATIENCE_MS },
    );
    const { coopsConnection } = await gql<{
      coopsConnection: { nodes: Array<{ id: string; name: string; capacity: number; coop_type: string }> };
    }>(
      base,
      `{ coopsConnection(where: { farm_id: { eq: "${farmId}" } }, first: 1000) { nodes { id name capacity coop_type } } }`,
    );
    const newCoop = coopsConnection.nodes.find((c) => c.name === coopName);
    expect(newCoop).toMatchObject({ capacity: 6, coop_type: 'backyard' });
    await page.waitForSelector(`#new-hen-coop option[value="${newCoop!.id}"]`, { timeout: PATIENCE_MS });
    await page.type('#new-hen-name', 'Pepper');
    await page.select('#new-hen-coop', newCoop!.id);
    await page.type('#new-hen-breed', 'silkie');
    await page.click('#hen-form button[type=submit]');
    const pepper = await page.waitForSelector(`[data-coop="${newCoop!.id}"][data-hen]`, {
      timeout: PATIENCE_MS,
    });
    expect(await pepper!.$eval('h3', (el) => el.textContent)).toBe('Pepper silkie');
    const { hensConnection } = await gql<{
      hensConnection: { nodes: Array<{ name: string; breed: string }> };
    }>(base, `{ hensConnection(where: { coop_id: { eq: "${newCoop!.id}" } }) { nodes { name breed } } }`);
    expect(hensConnection.nodes).toEqual([{ name: 'Pepper', breed: 'silkie' }]);

    // The hen's history: its totals from the hen productivity projection, its latest lay reports.
    await page.click(`[data-hen="${hen}"] [data-history] summary`);
    await page.waitForSelector(`[data-hen="${hen}"] [data-reports][data-count]`, { timeout: PATIENCE_MS });
    const history = await gql<{
      layReportsConnection: { totalCount: number; nodes: Array<{ id: string }> };
      henProductivitiesConnection: { nodes: Array<{ total_eggs: number }> };
    }>(
      base,
      `{ layReportsConnection(where: { hen_id: { eq: "${hen}" } }, orderBy: [{ timestamp: DESC }], first: 10) { totalCount nodes { id } }
         henProductivitiesConnection(where: { hen_id: { eq: "${hen}" } }) { nodes { total_eggs } } }`,
    );
    expect(history.layReportsConnection.totalCount).toBe(before + 3);
    expect(
      await page.$eval(`[data-hen="${hen}"] [data-reports]`, (el) => (el as HTMLElement).dataset.count),
    ).toBe(String(before + 3));
    expect(
      await page.$$eval(`[data-hen="${hen}"] [data-report]`, (rows) =>
        rows.map((r) => (r as HTMLElement).dataset.report),
      ),
    ).toEqual(history.layReportsConnection.nodes.map((n) => n.id));
    expect(
      await page.$eval(`[data-hen="${hen}"] [data-total]`, (el) => (el as HTMLElement).dataset.total),
    ).toBe(String(history.henProductivitiesConnection.nodes[0]!.total_eggs));

    await page.setViewport({ width: 1280, height: 800 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${screenshots}homestead-desktop.png` });
    expect(statSync(`${screenshots}homestead-desktop.png`).size).toBeGreaterThan(5000);

    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('the homesteader app with EGGMESH_AUTH_READS', () => {
  let stack: SharedStack & { secret: string };
  let secret = '';

  beforeAll(async () => {
    stack = await authStack();
    secret = stack.secret;
  });

  it("asks for a token, shows the API's refusals, keeps a report it may not send, sends it with a token that may", async () => {
    const base = stack.urls.public;
    const admin = hs256(secret, { sub: 'admin', scope: 'eggmesh:write eggmesh:read' });
    const post = async (entity: string, body: Record<string, unknown>) => {
      const response = await fetch(`${base}/${entity}/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { id: string }).id;
    };
    const farm = await post('farm', { name: 'Hill Farm', farm_type: 'homestead', zone: 'north' });
    const coop = await post('coop', { name: 'Top coop', farm_id: farm, capacity: 6, coop_type: 'barn' });
    const hen = await post('hen', { name: 'Clucky', coop_id: coop, breed: 'leghorn' });

    const page = await browser.newPage();
    await page.goto(`${base}/homestead/`, { waitUntil: 'load' });
    await page.waitForSelector('#token-form', { visible: true, timeout: PATIENCE_MS });
    expect(await page.$eval('#error', (el) => el.textContent)).toMatch(/token/i);

    // A token that may read but not write: the farm and its hens show, the report waits with the API's 403.
    await page.type('#token', hs256(secret, { sub: 'viewer', scope: 'eggmesh:read' }));
    await page.click('#token-form button');
    await page.waitForSelector('#farm-form', { visible: true, timeout: PATIENCE_MS });
    await page.select('#farm', farm);
    await page.click('#farm-form button');
    await page.waitForSelector(`[data-hen="${hen}"]`, { timeout: PATIENCE_MS });
    await page.click(`[data-hen="${hen}"] [data-log]`);
    await page.waitForSelector('#token-form', { visible: true, timeout: PATIENCE_MS });
    expect(await page.$eval('#error', (el) => el.textContent)).toContain('eggmesh:write');
    await queued(page, 1);

    // A token that may write lay reports: the kept report is sent.
    await page.$eval('#token', (el) => {
      (el as HTMLInputElement).value = '';
    });
    await page.type(
      '#token',
      hs256(secret, { sub: 'farmer', scope: 'eggmesh:read eggmesh:write:lay_report' }),
    );
    await page.click('#token-form button');
    await queued(page, 0);
    const sent = await untilReports(base, hen, 1, { authorization: `Bearer ${admin}` });
    expect(sent.map((r) => r.eggs)).toEqual([1]);
    await page.close();
  });
});
