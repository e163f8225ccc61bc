// GraphiQL in a real headless Chromium, on the public port (the read-api), with nothing fetched from another host:
// the page loads, a query given by ?query= runs when the run button is clicked, and its answer shows
// in the result pane.

import { mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, chromiumPath } from '../../../infra/test/chromium.js';
import { type Fixture, fixture, ids, seed } from './helpers.js';

describe('GraphiQL in a browser, offline', () => {
  let f: Fixture;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    f = await fixture();
    await seed(f);
    // The write-api is not needed here: /graphiql and /graphql are the read-api's own.
    base = await f.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await puppeteer.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await f?.close();
  });

  it('runs a query from ?query= and shows the answer; every request stays on our host', async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    const origin = new URL(base).origin;
    const requested: string[] = [];
    const foreign: string[] = [];
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      const url = request.url();
      requested.push(url);
      if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) {
        void request.continue();
      } else {
        foreign.push(url);
        void request.abort();
      }
    });

    const query = `{ farm(id: "${ids.farm[0]}") { name zone coops { name } } }`;
    await page.goto(`${base}/graphiql?query=${encodeURIComponent(query)}`, { waitUntil: 'load' });
    const run = await page.waitForSelector('.graphiql-execute-button', { timeout: 20_000 });
    await run?.click();
    await page.waitForFunction(
      () => document.querySelector('.graphiql-response')?.textContent?.includes('Sunny Acres'),
      { timeout: 20_000 },
    );
    const shown = await page.$eval('.graphiql-response', (el) => el.textContent ?? '');
    expect(shown).toContain('"zone": "north"');
    expect(shown).toContain('Coop A');

    // One place, overwritten by each run (a run's screenshot for people to look at, not a pile of them).
    const dir = join(tmpdir(), 'eggmesh-graphiql');
    mkdirSync(dir, { recursive: true });
    const screenshot = join(dir, 'graphiql.png');
    await page.screenshot({ path: screenshot });
    expect(statSync(screenshot).size).toBeGreaterThan(1000);
    console.log(`GraphiQL screenshot: ${screenshot}`);

    expect(foreign).toEqual([]);
    expect(pageErrors).toEqual([]);
    const paths = requested.filter((u) => u.startsWith(origin)).map((u) => new URL(u).pathname);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/graphiql',
        '/graphiql/assets/react.production.min.js',
        '/graphiql/assets/react-dom.production.min.js',
        '/graphiql/assets/graphiql.min.js',
        '/graphiql/assets/graphiql.min.css',
        '/graphiql/assets/graphiql-init.js',
        '/graphql',
      ]),
    );
    await page.close();
  });

  it("works under a Content-Security-Policy of 'self' only (fonts and icons inline as data:)", async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text());
    });
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      if (new URL(request.url()).pathname !== '/graphiql') return void request.continue();
      // The page as served, with the policy a strict front door would add.
      void fetch(request.url())
        .then(async (response) =>
          request.respond({
            status: response.status,
            contentType: response.headers.get('content-type') ?? 'text/html',
            headers: { 'content-security-policy': STRICT_CSP },
            body: await response.text(),
          }),
        )
        .catch(() => request.abort());
    });
    const query = `{ farm(id: "${ids.farm[1]}") { name } }`;
    await page.goto(`${base}/graphiql?query=${encodeURIComponent(query)}`, { waitUntil: 'load' });
    const run = await page.waitForSelector('.graphiql-execute-button', { timeout: 20_000 });
    await run?.click();
    await page.waitForFunction(
      () => document.querySelector('.graphiql-response')?.textContent?.includes('Dale End'),
      { timeout: 20_000 },
    );
    expect(violations).toEqual([]);
    await page.close();
  });
});

/** What GraphiQL needs, and no more: everything from the page's own host, fonts and icons as data: URLs. */
const STRICT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; font-src 'self' data:; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";
