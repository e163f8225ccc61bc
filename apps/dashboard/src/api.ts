import { type Client, createClient } from 'graphql-ws';

/** An answer of the API that is not data: its message as the API worded it, and its HTTP status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'eggmesh.token';

/** The bearer token the user gave (EGGMESH_AUTH_READS), for this browser tab only. */
export const token = {
  get: (): string => sessionStorage.getItem(TOKEN_KEY) ?? '',
  set: (value: string) => sessionStorage.setItem(TOKEN_KEY, value.trim()),
};

interface GraphqlAnswer<T> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

/** POST /graphql on this origin; any error (HTTP or GraphQL) throws the API's own message. */
export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token.get()) headers.authorization = `Bearer ${token.get()}`;
  const response = await fetch('/graphql', {
    method: 'POST',
    headers,
    body: JSON.stringify({ query, variables }),
  });
  const answer = (await response.json().catch(() => ({}))) as GraphqlAnswer<T>;
  const error = answer.errors?.[0];
  if (error) throw new ApiError(error.message, response.status, error.extensions?.code);
  if (!response.ok || !answer.data)
    throw new ApiError(`${response.status} ${response.statusText}`, response.status);
  return answer.data;
}

const PAGE = 5000;

/** Every row of a root list, page by page (`limit` and `after` in id order). */
export async function every<T extends { id: string }>(field: string, selection: string): Promise<T[]> {
  const rows: T[] = [];
  let after: string | null = null;
  for (;;) {
    const page: Record<string, T[] | null> = await graphql(
      `query ($after: ID) { ${field}(limit: ${PAGE}, after: $after) { id ${selection} } }`,
      { after },
    );
    const got = page[field] ?? [];
    rows.push(...got);
    if (got.length < PAGE) return rows;
    after = got[got.length - 1]!.id;
  }
}

/** The projection position the read side has reached: subscribing after it misses nothing read later. */
export async function projectionPosition(): Promise<number> {
  const response = await fetch('/ready');
  const body = (await response.json()) as { projections?: number; error?: string };
  if (!response.ok || body.projections === undefined) {
    throw new ApiError(body.error ?? `${response.status} ${response.statusText}`, response.status);
  }
  return body.projections;
}

/**
 * A graphql-ws client of this origin's /graphql that reconnects for as long as the page is open; it
 * says when the socket closed and when it is back.
 */
export function liveClient(events: { closed: () => void; reconnected: () => void }): Client {
  const url = new URL('/graphql', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return createClient({
    url: url.href,
    connectionParams: () => (token.get() ? { authorization: `Bearer ${token.get()}` } : {}),
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: () => true,
    on: {
      closed: events.closed,
      connected: (_socket, _payload, wasRetry) => {
        if (wasRetry) events.reconnected();
      },
    },
  });
}
