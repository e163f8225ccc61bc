import type { Browser, Page } from 'puppeteer-core';

/**
 * A new page that records what a user would never see: requests to another host (aborted), script
 * errors and Content Security Policy violations.
 */
export async function watchedPage(browser: Browser, origin: string) {
  const page: Page = await browser.newPage();
  const foreign: string[] = [];
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(String(error)));
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) problems.push(message.text());
  });
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.origin === origin || url.protocol === 'data:') return void request.continue();
    foreign.push(request.url());
    void request.abort();
  });
  return { page, foreign, problems };
}

/** A GraphQL query to the public port, as a test checks a page against it; any error throws. */
export async function gql<T>(
  base: string,
  query: string,
  {
    variables = {},
    headers = {},
  }: { variables?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<T> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const answer = (await response.json()) as { data?: T; errors?: unknown[] };
  if (!answer.data || answer.errors) throw new Error(`GraphQL failed: ${JSON.stringify(answer)}`);
  return answer.data;
}
