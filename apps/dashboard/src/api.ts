import { type Client, createClient } from 'graphql-ws';
import { ApiError, graphql, jsonBody, token } from '../../shared/api.js';

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
  const body = (await jsonBody(response)) as { projections?: number; error?: string };
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
