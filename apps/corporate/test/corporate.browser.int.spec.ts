// The corporate portal in a real headless Chromium (Debian's) on the public port of the run's seeded
// stack (`pnpm start`, `pnpm seed`; infra/test/shared-stacks.ts): its KPI cards, a sort and a filter of a
// table and the utilization badges equal the GraphQL answers; a hen and a lay report entered by hand are
// stored; CSV files of hens and of 2,000 lay reports, with good and bad rows, are uploaded through the
// bulk API and every row's outcome is checked against the API. Then with EGGMESH_AUTH=jwt: it asks for a
// token and shows the API's refusals.

import { statSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, watchedPage } from '../../../infra/test/browser.js';
import { CHROMIUM_ARGS, chromiumPath } from '../../../infra/test/chromium.js';
import {
  authStack,
  type SharedStack,
  screenshotDir,
  seededStack,
} from '../../../infra/test/shared-stacks.js';
import { hs256 } from '../../../services/write-api/test/jwt.js';

/** How long the page may take on a loaded machine: a bound on a hang, not a speed test. */
const PATIENCE_MS = 90_000;

/** The ids of the table's rows, in the order the page shows them, once it shows `total` matches. */
async function shownRows(page: Page, total: number): Promise<string[]> {
  await page.waitForFunction(
    (t) => document.getElementById('table-status')?.dataset.total === String(t),
    { timeout: PATIENCE_MS },
    total,
  );
  return page.$$eval('#table tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.id ?? ''));
}

/** Uploads a CSV file through the form and waits for its end; answers the summary and the refused lines. */
async function upload(page: Page, entity: string, csv: string) {
  await page.select('#upload-entity', entity);
  await page.$eval(
    '#upload-file',
    (input, text) => {
      const files = new DataTransfer();
      files.items.add(new File([text], 'rows.csv', { type: 'text/csv' }));
      (input as HTMLInputElement).files = files.files;
    },
    csv,
  );
  await page.click('#upload-form button[type=submit]');
  await page.waitForFunction(() => document.getElementById('upload-summary')?.dataset.done === 'true', {
    timeout: PATIENCE_MS,
  });
  const summary = await page.$eval('#upload-summary', (el) => ({
    accepted: Number((el as HTMLElement).dataset.accepted),
    refused: Number((el as HTMLElement).dataset.refused),
    text: el.textContent ?? '',
  }));
  const refused = await page.$$eval('#upload-refused tbody tr', (rows) =>
    rows.map((r) => ({
      line: Number((r as HTMLElement).dataset.line),
      reason: r.lastElementChild?.textContent ?? '',
    })),
  );
  const progress = await page.$eval('#upload-progress', (el) => ({
    value: (el as HTMLProgressElement).value,
    max: (el as HTMLProgressElement).max,
  }));
  return { summary, refused, progress };
}

/** What the API answers for one row on its own (the single create): its message and its issues' messages. */
async function refusalOf(base: string, entity: string, body: Record<string, unknown>) {
  const response = await fetch(`${base}/${entity}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(400);
  const answer = (await response.json()) as { error: string; issues: Array<{ message: string }> };
  return [answer.error, ...answer.issues.map((i) => i.message)];
}

let browser: Browser;
beforeAll(async () => {
  browser = await puppeteer.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
});

describe('the corporate portal in a browser (pnpm start, seeded)', () => {
  let stack: SharedStack;
  beforeAll(async () => {
    stack = await seededStack();
  });

  it('shows KPIs and tables as GraphQL answers them, enters a hen and a lay report, uploads CSV files row by row', async () => {
    const base = stack.urls.public;
    const { page, foreign, problems } = await watchedPage(browser, new URL(base).origin);
    await page.setViewport({ width: 1280, height: 800 });
    const response = await page.goto(`${base}/corporate/`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('body[data-ready]', { timeout: PATIENCE_MS });
    expect(await page.$eval('#token-form', (el) => el.checkVisibility())).toBe(false);
    expect(await page.$eval('#error', (el) => el.checkVisibility())).toBe(false);

    // One KPI card per farm, with the farm output projection's numbers.
    const { farmsConnection } = await gql<{
      farmsConnection: {
        nodes: Array<{ id: string; farmOutput: Array<{ eggs_week: number; total_hens: number }> }>;
      };
    }>(
      base,
      '{ farmsConnection(first: 200) { nodes { id farmOutput(limit: 1) { eggs_week total_hens } } } }',
    );
    expect(farmsConnection.nodes.length).toBeGreaterThan(0);
    for (const farm of farmsConnection.nodes) {
      const shown = await page.$eval(`[data-farm="${farm.id}"]`, (card) => ({
        week: card.querySelector('[data-stat="eggs_week"]')?.getAttribute('data-value'),
        hens: card.querySelector('[data-stat="total_hens"]')?.getAttribute('data-value'),
      }));
      expect(shown).toEqual({
        week: String(farm.farmOutput[0]?.eggs_week ?? 0),
        hens: String(farm.farmOutput[0]?.total_hens ?? 0),
      });
    }

    // The hens table sorted by breed (a click on its header), then filtered by status.
    const hensBy = async (where: Record<string, unknown>, order: string) =>
      (
        await gql<{ hensConnection: { totalCount: number; nodes: Array<{ id: string }> } }>(
          base,
          `query ($where: HenWhere) { hensConnection(where: $where, orderBy: [${order}], first: 25) { totalCount nodes { id } } }`,
          { variables: { where } },
        )
      ).hensConnection;
    const byBreed = await hensBy({}, '{ breed: ASC }');
    await page.click('#table [data-sort="breed"]');
    await page.waitForSelector('#table th[aria-sort="ascending"] [data-sort="breed"]', {
      timeout: PATIENCE_MS,
    });
    expect(await shownRows(page, byBreed.totalCount)).toEqual(byBreed.nodes.map((n) => n.id));
    // Keyboard: the header keeps the focus, and Enter turns the order around.
    expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.sort)).toBe(
      'breed',
    );
    await page.keyboard.press('Enter');
    await page.waitForSelector('#table th[aria-sort="descending"] [data-sort="breed"]', {
      timeout: PATIENCE_MS,
    });
    expect(await shownRows(page, byBreed.totalCount)).toEqual(
      (await hensBy({}, '{ breed: DESC }')).nodes.map((n) => n.id),
    );
    const retired = await hensBy({ status: { eq: 'retired' } }, '{ breed: DESC }');
    expect(retired.totalCount).toBeGreaterThan(0);
    expect(retired.totalCount).toBeLessThan(byBreed.totalCount);
    await page.select('#filter-status', 'retired');
    await page.click('#filters button[type=submit]');
    expect(await shownRows(page, retired.totalCount)).toEqual(retired.nodes.map((n) => n.id));

    // Containers: each row's utilization badge is its inventory's.
    await page.click('#tabs [data-table="containers"]');
    const { containersConnection } = await gql<{
      containersConnection: {
        totalCount: number;
        nodes: Array<{ id: string; inventory: Array<{ utilization_pct: number }> }>;
      };
    }>(
      base,
      '{ containersConnection(orderBy: [{ capacity: DESC }], first: 25) { totalCount nodes { id inventory(limit: 1) { utilization_pct } } } }',
    );
    expect(await shownRows(page, containersConnection.totalCount)).toEqual(
      containersConnection.nodes.map((n) => n.id),
    );
    const badges = await page.$$eval('#table tbody tr', (rows) =>
      rows.map((r) => r.querySelector('[data-utilization]')?.getAttribute('data-utilization') ?? null),
    );
    expect(badges).toEqual(
      containersConnection.nodes.map((n) => (n.inventory[0] ? String(n.inventory[0].utilization_pct) : null)),
    );
    expect(badges.some((b) => b !== null)).toBe(true);

    // Manual entry: a hen, then a lay report of that hen.
    const { coopsConnection } = await gql<{
      coopsConnection: { nodes: Array<{ id: string; farm_id: string }> };
    }>(base, '{ coopsConnection(first: 1) { nodes { id farm_id } } }');
    const coop = coopsConnection.nodes[0]!;
    await page.type('#hen-name', 'Desk Hen');
    await page.select('#hen-coop', coop.id);
    await page.type('#hen-breed', 'silkie');
    await page.click('#hen-form button[type=submit]');
    await page.waitForFunction(
      () => document.querySelector('#hen-form .outcome')?.textContent?.startsWith('Added'),
      { timeout: PATIENCE_MS },
    );
    const henId = /\(([0-9a-f-]{36})\)/.exec(
      (await page.$eval('#hen-form .outcome', (el) => el.textContent)) ?? '',
    )?.[1];
    expect(henId).toBeDefined();
    const { hen } = await gql<{ hen: { name: string; breed: string; coop_id: string; status: string } }>(
      base,
      `{ hen(id: "${henId}") { name breed coop_id status } }`,
    );
    expect(hen).toEqual({ name: 'Desk Hen', breed: 'silkie', coop_id: coop.id, status: 'active' });

    await page.select('#report-coop', coop.id);
    await page.waitForSelector(`#report-hen option[value="${henId}"]`, { timeout: PATIENCE_MS });
    await page.select('#report-hen', henId!);
    await page.$eval('#report-eggs', (el) => {
      (el as HTMLInputElement).value = '';
    });
    await page.type('#report-eggs', '4');
    await page.select('#report-quality', 'double_yolk');
    await page.click('#report-form button[type=submit]');
    await page.waitForFunction(
      () => document.querySelector('#report-form .outcome')?.textContent?.startsWith('Added'),
      { timeout: PATIENCE_MS },
    );
    const reportsOf = async (hen: string) =>
      (
        await gql<{
          layReportsConnection: {
            totalCount: number;
            nodes: Array<{ eggs: number; quality: string; farm_id: string }>;
          };
        }>(
          base,
          `{ layReportsConnection(where: { hen_id: { eq: "${hen}" } }, first: 1) { totalCount nodes { eggs quality farm_id } } }`,
        )
      ).layReportsConnection;
    expect(await reportsOf(henId!)).toEqual({
      totalCount: 1,
      nodes: [{ eggs: 4, quality: 'double_yolk', farm_id: coop.farm_id }],
    });
    // A refusal shows the API's message in the form: a report dated next year.
    const nextYear = new Date(Date.now() + 366 * 86_400_000);
    const local = new Date(nextYear.getTime() - nextYear.getTimezoneOffset() * 60_000)
      .toISOString()
      .slice(0, 16);
    await page.$eval(
      '#report-time',
      (el, value) => {
        (el as HTMLInputElement).value = value;
      },
      local,
    );
    await page.click('#report-form button[type=submit]');
    await page.waitForSelector('#report-form .outcome.error', { timeout: PATIENCE_MS });
    const refusal = await refusalOf(base, 'lay_report', {
      hen_id: henId,
      coop_id: coop.id,
      farm_id: coop.farm_id,
      eggs: 4,
      quality: 'double_yolk',
      timestamp: new Date(`${local}:00`).toISOString(),
    });
    const shownRefusal = await page.$eval('#report-form .outcome', (el) => el.textContent ?? '');
    // The bound the server names is its clock's at that moment: the rest of the words are the same.
    for (const text of refusal) expect(shownRefusal).toContain(text.replace(/ \([^)]*\)$/, ''));
    expect(await reportsOf(henId!)).toMatchObject({ totalCount: 1 });

    // CSV of hens: good rows (one with a quoted comma) and bad ones, each refused with the API's reason.
    const breed = `csv-${Date.now()}`;
    const bad = {
      3: { coop_id: coop.id, breed },
      5: { name: 'Lost', coop_id: 'not-a-coop', breed },
      6: { name: 'Flying', coop_id: coop.id, breed, status: 'flying' },
    } as Record<number, Record<string, string>>;
    const henCsv = [
      'name,coop_id,breed,status',
      `"Hen, the first",${coop.id},${breed},active`,
      `,${coop.id},${breed},`,
      `Second,${coop.id},${breed},`,
      `Lost,not-a-coop,${breed},`,
      `Flying,${coop.id},${breed},flying`,
      `Third,${coop.id},${breed},retired`,
    ].join('\r\n');
    const hens = await upload(page, 'hen', henCsv);
    expect(hens.summary).toMatchObject({ accepted: 3, refused: 3 });
    expect(hens.refused.map((r) => r.line)).toEqual([3, 5, 6]);
    for (const row of hens.refused) {
      for (const text of await refusalOf(base, 'hen', bad[row.line]!)) expect(row.reason).toContain(text);
    }
    const stored = await gql<{ hensConnection: { totalCount: number; nodes: Array<{ name: string }> } }>(
      base,
      `{ hensConnection(where: { breed: { eq: "${breed}" } }, orderBy: [{ id: ASC }], first: 10) { totalCount nodes { name } } }`,
    );
    expect(stored.hensConnection.totalCount).toBe(3);
    expect(stored.hensConnection.nodes.map((n) => n.name).sort()).toEqual([
      'Hen, the first',
      'Second',
      'Third',
    ]);

    // CSV of 2,000 lay reports of the desk hen, in chunks (a progress step each); every 250th row is bad.
    const lines = ['hen_id,coop_id,farm_id,eggs,quality,timestamp'];
    const badLines: number[] = [];
    // Dated a year back: the week's and month's numbers the other apps' tests and screenshots show stay the seed's.
    const start = Date.now() - 400 * 86_400_000;
    for (let i = 0; i < 2000; i++) {
      const line = i + 2;
      let eggs = String(i % 6);
      if (i % 250 === 7) {
        badLines.push(line);
        eggs = i % 500 === 7 ? 'three' : '-2';
      }
      lines.push(
        `${henId},${coop.id},${coop.farm_id},${eggs},grade_a,${new Date(start + i * 1000).toISOString()}`,
      );
    }
    const steps: number[] = [];
    await page.exposeFunction('progressStep', (value: number) => steps.push(value));
    await page.$eval('#upload-progress', (bar) => {
      new MutationObserver(() =>
        (window as unknown as { progressStep: (v: number) => void }).progressStep(
          (bar as HTMLProgressElement).value,
        ),
      ).observe(bar, { attributes: true, attributeFilter: ['value'] });
    });
    const reports = await upload(page, 'lay_report', lines.join('\n'));
    expect(reports.summary).toMatchObject({ accepted: 2000 - badLines.length, refused: badLines.length });
    expect(reports.refused.map((r) => r.line)).toEqual(badLines);
    expect(reports.refused[0]!.reason).toContain('eggs');
    expect(reports.progress).toEqual({ value: 2000, max: 2000 });
    expect(await reportsOf(henId!)).toMatchObject({ totalCount: 1 + 2000 - badLines.length });

    // Screenshots: desktop, then phone size, where nothing is wider than the screen.
    const dir = screenshotDir();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${dir}corporate-desktop.png` });
    // A phone viewport reloads the page (puppeteer): the screenshot waits for its data.
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
    await page.waitForSelector('body[data-ready] [data-farm]', { timeout: PATIENCE_MS });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: `${dir}corporate-phone.png` });
    for (const name of ['corporate-desktop.png', 'corporate-phone.png']) {
      expect(statSync(`${dir}${name}`).size).toBeGreaterThan(5000);
    }
    expect(steps.filter((v) => v > 0)).toEqual([500, 1000, 1500, 2000]);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('the corporate portal with EGGMESH_AUTH=jwt and EGGMESH_AUTH_READS', () => {
  let stack: SharedStack & { secret: string };
  beforeAll(async () => {
    stack = await authStack();
  });

  it("asks for a token, shows the API's refusal of an upload, stores it with a token that may write", async () => {
    const base = stack.urls.public;
    const admin = hs256(stack.secret, { sub: 'admin', scope: 'eggmesh:write eggmesh:read' });
    const post = async (entity: string, body: Record<string, unknown>) => {
      const response = await fetch(`${base}/${entity}/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { id: string }).id;
    };
    const farm = await post('farm', { name: 'Desk Farm', farm_type: 'megafarm', zone: 'south' });
    const coop = await post('coop', { name: 'Desk coop', farm_id: farm, capacity: 50, coop_type: 'barn' });

    const { page, foreign, problems } = await watchedPage(browser, new URL(base).origin);
    await page.goto(`${base}/corporate/`, { waitUntil: 'load' });
    await page.waitForSelector('#token-form', { visible: true, timeout: PATIENCE_MS });
    expect(await page.$eval('#error', (el) => el.textContent)).toMatch(/token/i);

    // A token that may read: the tables show; an upload is refused with the API's 403 message.
    await page.type('#token', hs256(stack.secret, { sub: 'viewer', scope: 'eggmesh:read' }));
    await page.click('#token-form button');
    await page.waitForSelector('body[data-ready]', { timeout: PATIENCE_MS });
    await page.waitForSelector(`[data-farm="${farm}"]`, { timeout: PATIENCE_MS });
    const csv = `name,coop_id,breed\nToken Hen,${coop},leghorn\n`;
    await page.select('#upload-entity', 'hen');
    await page.$eval(
      '#upload-file',
      (input, text) => {
        const files = new DataTransfer();
        files.items.add(new File([text], 'hens.csv', { type: 'text/csv' }));
        (input as HTMLInputElement).files = files.files;
      },
      csv,
    );
    await page.click('#upload-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('upload-summary')?.dataset.done === 'error', {
      timeout: PATIENCE_MS,
    });
    expect(await page.$eval('#upload-summary', (el) => el.textContent)).toContain('eggmesh:write');
    await page.waitForSelector('#token-form', { visible: true, timeout: PATIENCE_MS });

    // A token that may write hens: the same file is stored.
    await page.$eval('#token', (el) => {
      (el as HTMLInputElement).value = '';
    });
    await page.type(
      '#token',
      hs256(stack.secret, { sub: 'manager', scope: 'eggmesh:read eggmesh:write:hen' }),
    );
    await page.click('#token-form button');
    await page.waitForSelector('#token-form', { hidden: true, timeout: PATIENCE_MS });
    await page.click('#upload-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('upload-summary')?.dataset.done === 'true', {
      timeout: PATIENCE_MS,
    });
    const { hensConnection } = await gql<{ hensConnection: { nodes: Array<{ name: string }> } }>(
      base,
      `{ hensConnection(where: { coop_id: { eq: "${coop}" } }) { nodes { name } } }`,
      { headers: { authorization: `Bearer ${admin}` } },
    );
    expect(hensConnection.nodes).toEqual([{ name: 'Token Hen' }]);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
