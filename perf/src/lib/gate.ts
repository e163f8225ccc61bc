import { isDeepStrictEqual } from 'node:util';

/** A wrong answer, an unexpected status or a failed request: the bench stops and reports it. */
export class GateError extends Error {
  override readonly name = 'GateError';
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new GateError(message);
}

export function checkEqual(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new GateError(`${what}: expected ${brief(expected)}, got ${brief(actual)}`);
  }
}

export function brief(value: unknown, max = 300): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text === undefined ? String(value) : text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Counts right and wrong answers seen under load; keeps the first few messages. */
export class Verdicts {
  ok = 0;
  wrong = 0;
  readonly messages: string[] = [];

  fail(message: string): void {
    this.wrong++;
    if (this.messages.length < 5) this.messages.push(message);
  }

  /** Throws if anything was wrong. */
  assertClean(label: string): void {
    if (this.wrong > 0) {
      throw new GateError(
        `${label}: ${this.wrong} wrong answer(s) under load, e.g.\n  ${this.messages.join('\n  ')}`,
      );
    }
  }
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body, or undefined when it is not JSON. */
  readonly json: unknown;
}

/** One request through fetch, for correctness gates and probes (not for load). */
export async function http(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const init: RequestInit = { method, headers: { ...headers }, signal: AbortSignal.timeout(30_000) };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(url, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** A GraphQL query that must answer 200 without errors; returns `data`. */
export async function graphql(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const answer = await http('POST', url, variables ? { query, variables } : { query }, headers);
  check(answer.status === 200, `POST ${url}: HTTP ${answer.status} ${brief(answer.text)}`);
  const body = answer.json as { data?: Record<string, unknown>; errors?: unknown } | undefined;
  check(body && !body.errors, `POST ${url}: GraphQL errors ${brief(answer.text)}`);
  check(body.data, `POST ${url}: no data in ${brief(answer.text)}`);
  return body.data;
}
