// What every app under apps/ says to the API: same origin (the public port), the bearer token the user
// gave, and the API's own message on any refusal. Imported by relative path from each app's sources.

/** An answer of the API that is not data: its message as the API worded it, its status and its body. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'eggmesh.token';

/** The bearer token the user gave (`EGGMESH_AUTH=jwt`), for this browser tab only. */
export const token = {
  get: (): string => sessionStorage.getItem(TOKEN_KEY) ?? '',
  set: (value: string) => sessionStorage.setItem(TOKEN_KEY, value.trim()),
};

/** The `authorization` header of the token, if the user gave one. */
export const authHeaders = (): Record<string, string> =>
  token.get() ? { authorization: `Bearer ${token.get()}` } : {};

/** A refusal (401, 403) that a token, or another token, may cure: the apps then ask for one. */
export const wantsToken = (error: unknown): boolean =>
  error instanceof ApiError && (error.status === 401 || error.status === 403);

/**
 * The log position of this page's last write: reads ask for it (`x-min-position`), so a page reads what
 * it wrote even when the projector has not applied it yet.
 */
let lastWrite = 0;

interface GraphqlAnswer<T> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

/**
 * The JSON body of an answer, or `{}` when the body is not JSON (a proxy's HTML page). A body cut short
 * (the server went away mid-answer) rejects with the network's TypeError, as a refused connection does:
 * the caller sees the server was lost, not a refusal worded "200 OK".
 */
export async function jsonBody(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}

/**
 * A failure that says the server is gone for a moment, not that it refused: it could not be reached or
 * went away mid-answer (TypeError), or it, or the proxy before it, cannot serve yet (502, 503, 504).
 */
export const isTransient = (error: unknown): boolean =>
  error instanceof TypeError ||
  (error instanceof ApiError && (error.status === 502 || error.status === 503 || error.status === 504));

/** POST /graphql on this origin; any error (HTTP or GraphQL) throws the API's own message. */
export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...authHeaders(),
      ...(lastWrite > 0 ? { 'x-min-position': String(lastWrite) } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  const answer = (await jsonBody(response)) as GraphqlAnswer<T>;
  const error = answer.errors?.[0];
  if (error) throw new ApiError(error.message, response.status, error.extensions?.code);
  if (!response.ok || !answer.data)
    throw new ApiError(`${response.status} ${response.statusText}`, response.status);
  return answer.data;
}

/**
 * A REST write on this origin (`POST /<entity>/api`, `…/bulk`): the answer's body, or an ApiError with
 * the API's message, code and whole body (`index`, `issues` of a refused bulk item).
 */
export async function restWrite<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeaders() },
    body: JSON.stringify(body),
  });
  const answer = await jsonBody(response);
  if (response.ok) {
    lastWrite = Math.max(lastWrite, Number(response.headers.get('x-log-position')) || 0);
    return answer as T;
  }
  const refusal = (answer ?? {}) as { error?: string; code?: string };
  const error = new ApiError(
    refusal.error ?? `${response.status} ${response.statusText}`,
    response.status,
    refusal.code,
    refusal as Record<string, unknown>,
  );
  const retryAfter = Number(response.headers.get('retry-after'));
  if (retryAfter > 0) error.body.retryAfterS = retryAfter;
  throw error;
}

/**
 * The API's refusal in words: its message, then each issue's field and message (`issues` of a 400
 * `EGGMESH_VALIDATION`; in a bulk request the path starts with the item's index, which is left out).
 */
export function refusalText(error: unknown): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  const issues = (error.body.issues ?? []) as Array<{ path?: Array<string | number>; message?: string }>;
  const bulk = typeof error.body.index === 'number';
  const details = issues
    .map((issue) => {
      const field = (issue.path ?? []).slice(bulk ? 1 : 0).join('.');
      return field ? `${field}: ${issue.message ?? ''}` : (issue.message ?? '');
    })
    .filter((text) => text !== '');
  return details.length > 0 ? `${error.message} (${details.join('; ')})` : error.message;
}

/** Escapes text for the HTML strings the apps draw. */
export const esc = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
