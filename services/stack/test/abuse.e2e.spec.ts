import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningStack, startStack } from './helpers.js';

// Hostile GraphQL and HTTP against the whole running stack (real processes), through the public port (the
// read-api, which forwards writes) and straight to the write-api. Every hostile request goes twice (graphql-jit compiles a document on its second run),
// must be answered within HANG_MS (a hang detector, not a speed assertion), with a 4xx and a documented code (or
// a 200 where the contract allows one), and the service must still answer /health afterwards. No 5xx, anywhere.

const HANG_MS = 10_000;
/** Per test: several hostile requests, each bounded by HANG_MS. */
const TEST_MS = 240_000;
vi.setConfig({ testTimeout: TEST_MS });
/** Short, so a slow-trickle body is cut off well inside HANG_MS. */
const REQUEST_TIMEOUT_MS = 2_000;

/** Every error code the contract documents (REST table in docs/api.md, GraphQL table in the read-api README). */
const documented = (() => {
  const codes = new Set<string>();
  for (const doc of ['../../../docs/api.md', '../../read-api/README.md']) {
    const text = readFileSync(fileURLToPath(new URL(doc, import.meta.url)), 'utf8');
    for (const match of text.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)) codes.add(match[1]!);
  }
  // Codes that stand for a server failure are documented but never an acceptable answer to a client's request.
  for (const failure of [
    'INTERNAL_SERVER_ERROR',
    'EGGMESH_INTERNAL',
    'EGGMESH_UPSTREAM_UNAVAILABLE',
    'EGGMESH_UNAVAILABLE',
  ])
    codes.delete(failure);
  return codes;
})();

interface GraphqlError {
  message?: string;
  extensions?: { code?: unknown };
}
interface Body {
  data?: Record<string, unknown> | null;
  errors?: GraphqlError[];
  code?: unknown;
  error?: unknown;
}
interface Answer {
  label: string;
  status: number;
  text: string;
  body: Body | undefined;
}

let stack: RunningStack;
const seen: { label: string; status: number }[] = [];
const ids = { farm: '', coop: '', hen: '' };

type Service = 'public' | 'write';
/** Services that stopped answering /health, with the case that left them so. */
const wedged = new Map<Service, string>();

function servicesOf(url: string): Service[] {
  if (url.startsWith(stack.urls.write)) return ['write'];
  const path = new URL(url).pathname;
  return /^\/[a-z_]+\/api(\/|$)/.test(path) ? ['public', 'write'] : ['public'];
}

const lastProbe = new Map<Service, number>();
/**
 * Once a service stopped answering, every later case that needs it fails at once (naming the case that wedged
 * it) unless a quick /health probe shows it recovered: one hang must not turn the suite into a string of
 * 10-second timeouts.
 */
async function refuseIfWedged(label: string, url: string): Promise<void> {
  for (const service of servicesOf(url)) {
    const since = wedged.get(service);
    if (since === undefined) continue;
    // Probe at most every 5 s, so a wedged service costs the cases after it next to nothing.
    const recent = Date.now() - (lastProbe.get(service) ?? 0) < 5000;
    if (!recent) lastProbe.set(service, Date.now());
    const ok =
      !recent &&
      (await fetch(`${stack.urls[service]}/health`, { signal: AbortSignal.timeout(1000) })
        .then((r) => r.ok)
        .catch(() => false));
    if (ok) wedged.delete(service);
    else
      throw new Error(`${label}: not sent, the ${service} service has not answered /health since: ${since}`);
  }
}

async function call(label: string, url: string, init: RequestInit = {}): Promise<Answer> {
  await refuseIfWedged(label, url);
  if (!url.endsWith('/health')) {
    lastUrl = url;
    lastLabel = label;
  }
  let status: number;
  let text: string;
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(HANG_MS) });
    status = response.status;
    text = await response.text();
  } catch (error) {
    const reason =
      error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${HANG_MS} ms` : error;
    throw new Error(
      `${label}: ${String(reason)}${error instanceof Error && error.cause ? ` (${String(error.cause)})` : ''}`,
    );
  }
  seen.push({ label, status });
  let body: Body | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    body = parsed !== null && typeof parsed === 'object' ? (parsed as Body) : undefined;
  } catch {
    body = undefined;
  }
  return { label, status, text, body };
}

const show = (a: Answer) => `${a.label} → ${a.status} ${a.text.slice(0, 300)}`;
const codesOf = (a: Answer): unknown[] => [
  ...(a.body?.code === undefined ? [] : [a.body.code]),
  ...(a.body?.errors ?? []).map((e) => e.extensions?.code),
];

/** A 4xx (one of `statuses` when given) with a documented, stable code (one of `codes` when given). */
function expectRefused(a: Answer, statuses?: readonly number[], codes?: readonly string[]): void {
  if (statuses) expect(statuses, show(a)).toContain(a.status);
  else expect(a.status >= 400 && a.status < 500, show(a)).toBe(true);
  const found = codesOf(a);
  expect(found.length, `no code: ${show(a)}`).toBeGreaterThan(0);
  for (const code of found) {
    expect(documented.has(String(code)), `undocumented code ${String(code)}: ${show(a)}`).toBe(true);
    if (codes) expect(codes, show(a)).toContain(code);
  }
}

/** Either answered (200; any GraphQL errors beside the data carry documented codes) or refused as above. */
function expectAnsweredOrRefused(a: Answer): void {
  if (a.status === 200) {
    for (const code of (a.body?.errors ?? []).map((e) => e.extensions?.code))
      expect(documented.has(String(code)), `undocumented code ${String(code)}: ${show(a)}`).toBe(true);
  } else expectRefused(a);
}

/** Every service `url` goes through answers /health (within HANG_MS); one that does not is marked wedged. */
async function expectHealthy(url: string, after = 'an earlier case'): Promise<void> {
  for (const service of servicesOf(url)) {
    const base = stack.urls[service];
    const health = await call(`${service} /health`, `${base}/health`).catch((error: unknown) => error);
    if (health instanceof Error || (health as Answer).status !== 200) {
      if (!wedged.has(service)) wedged.set(service, after);
      const seen = health instanceof Error ? health.message : show(health as Answer);
      throw new Error(`the ${service} service did not answer /health after ${after}: ${seen}`);
    }
  }
}

/** The last hostile request (URL and label): the services to check afterwards, and what to blame. */
let lastUrl = '';
let lastLabel = '';

/**
 * Sends the same hostile request twice (stopping at the first wrong answer), checks each answer, and then, in
 * any case, that the service behind `base` still answers /health.
 */
async function twice(send: () => Promise<Answer>, check: (a: Answer) => void, base: string): Promise<void> {
  let failure: Error | undefined;
  let round = 0;
  try {
    for (; round < 2; round++) check(await send());
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
  }
  // Not sent at all: the service was already known to be down, nothing new to learn from /health.
  if (failure?.message.includes(': not sent, ')) throw failure;
  const what = failure
    ? `round ${round + 1} of ${lastLabel} (${failure.message.split('\n')[0]!.slice(0, 160)})`
    : `${lastLabel} (answered twice)`;
  try {
    await expectHealthy(lastUrl || base, what);
  } catch (health) {
    const message = health instanceof Error ? health.message : String(health);
    throw new Error(failure ? `${failure.message}\n  and then: ${message}` : message);
  }
  if (failure) throw failure;
}

const postJson = (label: string, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  call(label, url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

function fragmentBomb(levels: number, type: string): string {
  const fragments = [`fragment G0 on ${type} { id }`, `fragment G1 on ${type} { x1: id ...G0 ...G0 }`];
  for (let i = 2; i <= levels; i++) fragments.push(`fragment G${i} on ${type} { ...G${i - 1} ...G${i - 1} }`);
  return fragments.join('\n');
}

/** A raw HTTP/1.1 request, for what fetch will not send (Expect: 100-continue, a body trickled byte by byte). */
function rawRequest(
  label: string,
  url: string,
  options: { method: string; headers: Record<string, string>; body: Buffer; trickleMs?: number },
): Promise<{ status: number | 'closed'; text: string }> {
  lastUrl = url;
  lastLabel = label;
  return refuseIfWedged(label, url).then(
    () =>
      new Promise((resolve, reject) => {
        const req = httpRequest(url, { method: options.method, headers: options.headers, agent: false });
        const timer = setTimeout(() => {
          req.destroy();
          reject(new Error(`${label}: no answer within ${HANG_MS} ms`));
        }, HANG_MS);
        let trickle: NodeJS.Timeout | undefined;
        let settled = false;
        const done = (status: number | 'closed', text: string) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          clearInterval(trickle);
          if (typeof status === 'number') seen.push({ label, status });
          resolve({ status, text });
        };
        let responded = false;
        req.on('response', (response) => {
          responded = true;
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            text += chunk;
          });
          response.on('end', () => done(response.statusCode ?? 0, text));
          response.on('close', () => done(response.statusCode ?? 0, text));
        });
        // A failed write after the answer arrived changes nothing; before it, the server cut the request off.
        req.on('error', () => {
          if (!responded) done('closed', '');
        });
        if (options.trickleMs !== undefined) {
          let offset = 0;
          trickle = setInterval(() => {
            if (offset >= options.body.length || req.destroyed) return clearInterval(trickle);
            req.write(options.body.subarray(offset, offset + 1));
            offset += 1;
          }, options.trickleMs);
        } else if (options.headers.expect === '100-continue') {
          req.on('continue', () => req.end(options.body));
          // A server that neither says 100 Continue nor answers gets the body anyway (as curl does after 1 s).
          setTimeout(() => {
            if (!req.writableEnded && !req.destroyed) req.end(options.body);
          }, 1000);
        } else req.end(options.body);
      }),
  );
}

/**
 * POSTs a body through node:http rather than fetch: a server may answer (413) before it has read the whole body,
 * and that answer must reach the client; fetch gives up on the first failed write instead.
 */
async function postRaw(label: string, url: string, body: string): Promise<Answer> {
  const raw = Buffer.from(body);
  const a = await rawRequest(label, url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(raw.length) },
    body: raw,
  });
  if (a.status === 'closed') throw new Error(`${label}: connection closed without an answer`);
  let parsed: Body | undefined;
  try {
    parsed = JSON.parse(a.text) as Body;
  } catch {
    parsed = undefined;
  }
  return { label, status: a.status, text: a.text, body: parsed };
}

beforeAll(async () => {
  stack = await startStack({
    EGGMESH_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    EGGMESH_HTTP_HEADERS_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  });
  const create = async (path: string, payload: unknown) => {
    const a = await postJson(`seed ${path}`, `${stack.urls.write}${path}`, payload);
    expect(a.status, show(a)).toBe(201);
    return a;
  };
  ids.farm = String(
    (await create('/farm/api', { name: 'Abuse', farm_type: 'local_farm', zone: 'north' })).body?.id ?? '',
  );
  ids.coop = String(
    (await create('/coop/api', { name: 'C', farm_id: ids.farm, capacity: 10, coop_type: 'barn' })).body?.id ??
      '',
  );
  ids.hen = String(
    (await create('/hen/api', { name: 'H', coop_id: ids.coop, breed: 'sussex' })).body?.id ?? '',
  );
  // A hen with many reports, for the relation fan-out case.
  const report = (i: number) => ({
    hen_id: ids.hen,
    coop_id: ids.coop,
    farm_id: ids.farm,
    eggs: 1 + (i % 3),
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    quality: 'grade_a',
  });
  for (const batch of [0, 1000]) {
    const size = batch === 0 ? 1000 : 500;
    await create(
      '/lay_report/api/bulk',
      Array.from({ length: size }, (_, i) => report(batch + i)),
    );
  }
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

const graphTargets = [['public port', () => stack.urls.public]] as const;
const restTargets = [
  ['public port', () => stack.urls.public],
  ['write-api', () => stack.urls.write],
] as const;

describe.each(graphTargets)('hostile GraphQL through the %s', (name, baseOf) => {
  // The leading comment keeps the two targets' documents apart in the read-api's query cache: each is cold.
  const gql = (path: string, query: string, extra: Record<string, unknown> = {}, headers = {}) =>
    postJson(
      `${name} POST ${path}`,
      `${baseOf()}${path}`,
      { query: `# ${name}\n${query}`, ...extra },
      headers,
    );

  it.each([24, 30])('refuses a fragment bomb of %i levels on /graphql and /farm/graph', async (levels) => {
    const bomb = fragmentBomb(levels, 'Farm');
    // Refused, or answered right: the spreads merge into `{ x1: id id }`.
    const refusedOrMerged = (root: string) => (a: Answer) => {
      if (a.status !== 200) return expectRefused(a);
      expect(a.body, show(a)).toEqual({ data: { [root]: { x1: ids.farm, id: ids.farm } } });
    };
    await twice(
      () => gql('/graphql', `{ farm(id: "${ids.farm}") { ...G${levels} } }\n${bomb}`),
      refusedOrMerged('farm'),
      baseOf(),
    );
    await twice(
      () => gql('/farm/graph', `{ getById(id: "${ids.farm}") { ...G${levels} } }\n${bomb}`),
      refusedOrMerged('getById'),
      baseOf(),
    );
  });

  it('refuses 10,000 levels of nesting', async () => {
    const query = `${'{ a '.repeat(10_000)}${'}'.repeat(10_000)}`;
    await twice(
      () => gql('/graphql', query),
      (a) => expectRefused(a, [400]),
      baseOf(),
    );
    await twice(
      () => gql('/farm/graph', query),
      (a) => expectRefused(a, [400]),
      baseOf(),
    );
  });

  it('answers 413 to a document of several MB', async () => {
    const query = `{ farms { ${'id '.repeat(1_500_000)} } }`;
    await twice(
      () => postRaw(`${name} POST /graphql`, `${baseOf()}/graphql`, JSON.stringify({ query })),
      (a) => expectRefused(a, [413]),
      baseOf(),
    );
  });

  it('copes with 900 KB of fields and with many tokens', async () => {
    const fields = `{ farm(id: "${ids.farm}") { ${'id '.repeat(300_000)} } }`;
    await twice(() => gql('/graphql', fields), expectAnsweredOrRefused, baseOf());
    // 60,000 unused variable definitions: 180,000 tokens of a document that cannot validate.
    const variables = Array.from({ length: 60_000 }, (_, i) => `$v${i}: Int`).join(' ');
    await twice(
      () => gql('/graphql', `query Q(${variables}) { farms(limit: 1) { id } }`),
      (a) => expectRefused(a, [400]),
      baseOf(),
    );
  });

  it('copes with 10,000 aliases of farm(id) and 1,000 aliases of farms(limit: 1000)', async () => {
    const singles = Array.from({ length: 10_000 }, (_, i) => `a${i}: farm(id: "${ids.farm}") { id }`).join(
      ' ',
    );
    await twice(() => gql('/graphql', `{ ${singles} }`), expectAnsweredOrRefused, baseOf());
    const lists = Array.from({ length: 1000 }, (_, i) => `l${i}: farms(limit: 1000) { id name }`).join(' ');
    await twice(() => gql('/graphql', `{ ${lists} }`), expectAnsweredOrRefused, baseOf());
  });

  it('bounds a wide relation fan-out (50 aliases of hen { layReports })', async () => {
    const fan = Array.from(
      { length: 50 },
      (_, i) => `h${i}: hen(id: "${ids.hen}") { layReports { id } }`,
    ).join(' ');
    await twice(
      () => gql('/graphql', `{ ${fan} }`),
      (a) => {
        expectAnsweredOrRefused(a);
        expect(a.text.length, `${a.label}: ${a.text.length} bytes`).toBeLessThan(8 * 1024 * 1024);
        if (a.status !== 200 || !a.body?.data) return;
        for (const value of Object.values(a.body.data)) {
          const reports = (value as { layReports?: unknown[] } | null)?.layReports ?? [];
          expect(reports.length).toBeLessThanOrEqual(1000);
        }
      },
      baseOf(),
    );
  });

  it('refuses malformed GraphQL requests with stable codes', async () => {
    const base = baseOf();
    const byId = 'query ($id: ID!) { farm(id: $id) { id } }';
    const cases: [string, () => Promise<Answer>, (a: Answer) => void][] = [
      [
        'missing required variable',
        () => gql('/graphql', byId),
        (a) => expectRefused(a, [400], ['GRAPHQL_VALIDATION_FAILED']),
      ],
      [
        'wrong-typed variable',
        () => gql('/graphql', byId, { variables: { id: { nested: true } } }),
        (a) => expectRefused(a, [400], ['GRAPHQL_VALIDATION_FAILED']),
      ],
      [
        'variables not an object',
        () => gql('/graphql', byId, { variables: [ids.farm] }),
        (a) => expectRefused(a, [400], ['GRAPHQL_VALIDATION_FAILED', 'EGGMESH_GRAPHQL_BAD_REQUEST']),
      ],
      [
        'variables a number',
        () => gql('/graphql', byId, { variables: 42 }),
        (a) => expectRefused(a, [400], ['GRAPHQL_VALIDATION_FAILED', 'EGGMESH_GRAPHQL_BAD_REQUEST']),
      ],
      [
        'unknown operationName',
        () => gql('/graphql', 'query A { farms { id } }', { operationName: 'B' }),
        (a) => expectRefused(a, [400], ['GRAPHQL_VALIDATION_FAILED']),
      ],
      [
        'several operations without operationName',
        () => gql('/graphql', 'query A { farms { id } } query B { farms { name } }'),
        (a) => expectRefused(a, [400], ['GRAPHQL_VALIDATION_FAILED']),
      ],
      [
        'operationName not a string',
        () => gql('/graphql', 'query A { farms { id } }', { operationName: { a: 1 } }),
        (a) => expectRefused(a, [400]),
      ],
      [
        'query not a string',
        () => postJson(`${name} query: 1`, `${base}/graphql`, { query: 1 }),
        (a) => expectRefused(a, [400]),
      ],
      [
        'batched array body',
        () =>
          postJson(`${name} batch`, `${base}/graphql`, [
            { query: '{ farms { id } }' },
            { query: '{ hens { id } }' },
          ]),
        (a) => expectRefused(a, [400]),
      ],
      [
        'GET with a mutation',
        () =>
          call(
            `${name} GET mutation`,
            `${base}/graphql?query=${encodeURIComponent('mutation { farm(id: "x") { id } }')}`,
          ),
        (a) => expectRefused(a, [400, 405]),
      ],
      [
        'GET with variables that are not JSON',
        () =>
          call(`${name} GET variables`, `${base}/graphql?query=${encodeURIComponent(byId)}&variables=%7Bnot`),
        (a) => expectRefused(a, [400], ['EGGMESH_GRAPHQL_BAD_REQUEST']),
      ],
      [
        'GET with repeated query params',
        () =>
          call(
            `${name} GET ?query&query`,
            `${base}/graphql?query=${encodeURIComponent('{ farms { id } }')}&query=${encodeURIComponent('{ hens { id } }')}`,
          ),
        (a) => expectRefused(a, [400]),
      ],
      [
        'GET without a query',
        () => call(`${name} GET /graphql`, `${base}/graphql`),
        (a) => expectRefused(a, [400]),
      ],
      [
        'invalid JSON',
        () => postJson(`${name} invalid JSON`, `${base}/graphql`, '{"query": "{ farms { id } }"'),
        (a) => expectRefused(a, [400], ['EGGMESH_GRAPHQL_BAD_REQUEST']),
      ],
      [
        'wrong content-type',
        () =>
          call(`${name} text/plain`, `${base}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'text/plain' },
            body: '{ farms { id } }',
          }),
        (a) => expectRefused(a, [400, 415]),
      ],
      [
        'empty body',
        () =>
          call(`${name} empty`, `${base}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
          }),
        (a) => expectRefused(a, [400], ['EGGMESH_GRAPHQL_BAD_REQUEST']),
      ],
      ...['-1', '1.5', '1e400', '1, 2', 'abc'].map(
        (value): [string, () => Promise<Answer>, (a: Answer) => void] => [
          `x-min-position: ${value}`,
          () => gql('/graphql', '{ farms { id } }', {}, { 'x-min-position': value }),
          (a) => expectRefused(a, [400], ['EGGMESH_GRAPHQL_BAD_MIN_POSITION']),
        ],
      ),
      [
        'unknown method QUERY',
        () =>
          call(`${name} QUERY /graphql`, `${base}/graphql`, {
            method: 'QUERY',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ farms { id } }' }),
          }),
        (a) => expectRefused(a, [405]),
      ],
    ];
    const failures: string[] = [];
    for (const [title, send, check] of cases) {
      try {
        await twice(send, check, base);
      } catch (error) {
        failures.push(`${title}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('answers a large body sent with Expect: 100-continue (no 502)', async () => {
    const base = baseOf();
    for (const size of [2 * 1024 * 1024, 200 * 1024]) {
      // A valid request either way: the padding is a variable the operation does not declare, which GraphQL
      // ignores (the query document itself stays far below its own size cap).
      const body = Buffer.from(
        JSON.stringify({ query: '{ farms(limit: 1) { id } }', variables: { padding: 'x'.repeat(size) } }),
      );
      for (let round = 0; round < 2; round++) {
        const a = await rawRequest(`${name} Expect ${size}`, `${base}/graphql`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            expect: '100-continue',
            'content-length': String(body.length),
          },
          body,
        });
        expect(
          a.status,
          `${name} Expect: 100-continue, ${size} bytes → ${a.status} ${a.text.slice(0, 200)}`,
        ).toBe(size > 1024 * 1024 ? 413 : 200);
      }
      await expectHealthy(`${base}/graphql`);
    }
  });
});

describe.each(restTargets)('hostile REST through the %s', (name, baseOf) => {
  it('refuses odd query strings, methods and bodies with stable codes', async () => {
    const base = baseOf();
    const get = (path: string) => () => call(`${name} GET ${path}`, `${base}${path}`);
    const send =
      (method: string, path: string, body?: string, type = 'application/json') =>
      () =>
        call(`${name} ${method} ${path}`, `${base}${path}`, {
          method,
          headers: body === undefined ? {} : { 'content-type': type },
          body,
        });
    const cases: [string, () => Promise<Answer>, (a: Answer) => void][] = [
      ['?limit=1.5', get('/farm/api?limit=1.5'), (a) => expectRefused(a, [400], ['EGGMESH_BAD_QUERY'])],
      [
        '?limit=1&limit=2',
        get('/farm/api?limit=1&limit=2'),
        (a) => expectRefused(a, [400], ['EGGMESH_BAD_QUERY']),
      ],
      [
        '?after=x&after=y',
        get('/farm/api?after=x&after=y'),
        (a) => expectRefused(a, [400], ['EGGMESH_BAD_QUERY']),
      ],
      [
        '?at=1&at=2',
        get(`/farm/api/${ids.farm}?at=1&at=2`),
        (a) => expectRefused(a, [400], ['EGGMESH_BAD_QUERY']),
      ],
      [
        'bulk?ids=a&ids=b',
        get('/farm/api/bulk?ids=a&ids=b'),
        (a) => (a.status === 200 ? expect(a.body).toEqual([]) : expectRefused(a, [400])),
      ],
      [
        'QUERY /farm/api',
        send('QUERY', '/farm/api'),
        (a) => expectRefused(a, [405], ['EGGMESH_METHOD_NOT_ALLOWED']),
      ],
      [
        'QUERY /farm/api/bulk',
        send('QUERY', '/farm/api/bulk?ids='),
        (a) => expectRefused(a, [405], ['EGGMESH_METHOD_NOT_ALLOWED']),
      ],
      [
        `QUERY /farm/api/:id`,
        send('QUERY', `/farm/api/${ids.farm}`, '{}'),
        (a) => expectRefused(a, [405], ['EGGMESH_METHOD_NOT_ALLOWED']),
      ],
      [
        'invalid JSON',
        send('POST', '/farm/api', '{"name": '),
        (a) => expectRefused(a, [400], ['EGGMESH_BAD_JSON']),
      ],
      ['empty body', send('POST', '/farm/api', ''), (a) => expectRefused(a, [400], ['EGGMESH_BAD_JSON'])],
      [
        'deeply nested JSON',
        send('POST', '/farm/api', `${'['.repeat(100_000)}${']'.repeat(100_000)}`),
        (a) => expectRefused(a, [400]),
      ],
      [
        'wrong content-type',
        send('POST', '/farm/api', '{"name":"x"}', 'text/plain'),
        (a) => expectRefused(a, [415], ['EGGMESH_UNSUPPORTED_MEDIA_TYPE']),
      ],
      [
        'several MB body',
        () =>
          postRaw(
            `${name} POST /farm/api`,
            `${base}/farm/api`,
            JSON.stringify({ name: 'x'.repeat(3 << 20) }),
          ),
        (a) => expectRefused(a, [413], ['EGGMESH_BODY_TOO_LARGE']),
      ],
      [
        'an array where an object belongs',
        send('POST', '/farm/api', '[1,2,3]'),
        (a) => expectRefused(a, [400], ['EGGMESH_VALIDATION']),
      ],
    ];
    const failures: string[] = [];
    for (const [title, sendIt, check] of cases) {
      try {
        await twice(sendIt, check, base);
      } catch (error) {
        failures.push(`${title}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('refuses an Int32-overflowing capacity (REST 400), and the GraphQL coops list never answers 500', async () => {
    const base = baseOf();
    const coop = (capacity: number) => ({ name: 'Big', farm_id: ids.farm, capacity, coop_type: 'barn' });
    const failures: string[] = [];
    const attempt = async (title: string, run: () => Promise<void>) => {
      try {
        await run();
      } catch (error) {
        failures.push(`${title}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      }
    };
    for (const capacity of [2_147_483_648, -2_147_483_649, 1e308]) {
      await attempt(`POST capacity ${capacity}`, () =>
        twice(
          () => postJson(`${name} POST coop ${capacity}`, `${base}/coop/api`, coop(capacity)),
          (a) => expectRefused(a, [400], ['EGGMESH_VALIDATION']),
          base,
        ),
      );
      await attempt(`PUT capacity ${capacity}`, () =>
        twice(
          () =>
            call(`${name} PUT coop ${capacity}`, `${base}/coop/api/${ids.coop}`, {
              method: 'PUT',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(coop(capacity)),
            }),
          (a) => expectRefused(a, [400], ['EGGMESH_VALIDATION']),
          base,
        ),
      );
      await attempt(`bulk capacity ${capacity}`, () =>
        twice(
          () => postJson(`${name} bulk coop ${capacity}`, `${base}/coop/api/bulk`, [coop(1), coop(capacity)]),
          (a) => expectRefused(a, [400], ['EGGMESH_VALIDATION']),
          base,
        ),
      );
    }
    // Whatever the write side let through, the read side must answer it (no INTERNAL_SERVER_ERROR, no 500).
    for (const [graphName, graphBase] of [['public port', stack.urls.public]]) {
      for (const [path, query] of [
        ['/graphql', '{ coops { id capacity } }'],
        ['/coop/graph', '{ getAll { id capacity } }'],
      ] as const) {
        await attempt(`${graphName} ${path} coops`, () =>
          twice(
            () => postJson(`${graphName} ${path} coops`, `${graphBase}${path}`, { query }),
            (a) => {
              expect(a.status, show(a)).toBe(200);
              expectAnsweredOrRefused(a);
            },
            graphBase!,
          ),
        );
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it('answers a large body sent with Expect: 100-continue with 413 (no 502)', async () => {
    const base = baseOf();
    const body = Buffer.from(
      JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), farm_type: 'local_farm', zone: 'n' }),
    );
    for (let round = 0; round < 2; round++) {
      const a = await rawRequest(`${name} Expect`, `${base}/farm/api`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          expect: '100-continue',
          'content-length': String(body.length),
        },
        body,
      });
      expect(a.status, `${name} → ${a.status} ${a.text.slice(0, 200)}`).toBe(413);
    }
    await expectHealthy(`${base}/farm/api`);
  });
});

describe('slow clients', () => {
  it(`cuts off a body trickled one byte at a time (EGGMESH_HTTP_REQUEST_TIMEOUT_MS=${REQUEST_TIMEOUT_MS})`, async () => {
    const targets = [
      ['public port /farm/api', () => `${stack.urls.public}/farm/api`],
      ['write-api /farm/api', () => `${stack.urls.write}/farm/api`],
      ['public port /graphql', () => `${stack.urls.public}/graphql`],
    ] as const;
    const body = Buffer.from(JSON.stringify({ query: `{ farms { ${'id '.repeat(100)} } }` }));
    for (let round = 0; round < 2; round++) {
      const results = await Promise.allSettled(
        targets.map(([label, url]) =>
          rawRequest(`trickle ${label}`, url(), {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
            body,
            trickleMs: 250,
          }),
        ),
      );
      const outcomes = results.map((r, i) =>
        r.status === 'fulfilled'
          ? `${targets[i]![0]}: ${r.value.status}`
          : `${targets[i]![0]}: ${String(r.reason)}`,
      );
      for (const r of results) {
        expect(r.status, outcomes.join('\n')).toBe('fulfilled');
        // Cut off: a 408 (or 4xx), or the connection closed; anything but an answer to a half-sent body or a 5xx.
        if (r.status === 'fulfilled' && r.value.status !== 'closed')
          expect(r.value.status >= 400 && r.value.status < 500, outcomes.join('\n')).toBe(true);
      }
    }
    for (const [, url] of targets) await expectHealthy(url());
  });
});

// A quick random GraphQL fuzzer: documents generated from the unified schema's introspection, fixed seed.
interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}
interface Field {
  name: string;
  args: { name: string; type: TypeRef }[];
  type: TypeRef;
}
interface SchemaType {
  kind: string;
  name: string;
  fields: Field[] | null;
}

const introspection = `{ __schema { queryType { name } types { kind name fields { name args { name type { ...T } } type { ...T } } } } }
fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }`;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class DocumentFuzzer {
  private readonly random: () => number;
  private readonly types: Map<string, SchemaType>;
  private fragments: string[] = [];
  private aliasCount = 0;

  constructor(
    seed: number,
    types: SchemaType[],
    private readonly queryType: string,
    private readonly knownIds: string[],
  ) {
    this.random = mulberry32(seed);
    this.types = new Map(types.map((t) => [t.name, t]));
  }

  private chance(p: number): boolean {
    return this.random() < p;
  }
  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }
  private named(ref: TypeRef): TypeRef {
    return ref.ofType ? this.named(ref.ofType) : ref;
  }

  private wrongValue(): string {
    return this.pick([
      '"x"',
      '1',
      '-1.5',
      'true',
      'null',
      '[1, "a"]',
      '{ a: 1 }',
      'ENUM_VALUE',
      '$undeclared',
      '""',
    ]);
  }

  private value(ref: TypeRef): string {
    if (this.chance(0.12)) return this.wrongValue();
    if (ref.kind === 'NON_NULL' && ref.ofType) return this.value(ref.ofType);
    if (ref.kind === 'LIST' && ref.ofType) return `[${this.value(ref.ofType)}]`;
    switch (ref.name) {
      case 'ID':
        return JSON.stringify(
          this.pick([...this.knownIds, '', 'not-a-uuid', '00000000-0000-4000-8000-000000000000', '\u0000']),
        );
      case 'Int':
        return String(
          this.pick([0, 1, -1, 3, 1000, 10_000, 10_001, 2_147_483_647, -2_147_483_648, 2_147_483_648]),
        );
      case 'Float':
        return String(this.pick([0, 1.5, -1, 1e308, 1795300000000, -1e20, 8.64e15, 8.64e15 + 1]));
      case 'Boolean':
        return this.pick(['true', 'false']);
      default:
        return JSON.stringify(this.pick(['north', 'east', '', 'x'.repeat(300), '\u2603', '"quoted"']));
    }
  }

  private selection(typeName: string, depth: number): string {
    const type = this.types.get(typeName);
    const fields = type?.fields ?? [];
    if (fields.length === 0) return '';
    const parts: string[] = [];
    const count = 1 + Math.floor(this.random() * 4);
    for (let i = 0; i < count; i++) {
      if (this.chance(0.04)) {
        parts.push(this.pick(['nope', '__typename', 'id { id }', '__schema { queryType { name } }']));
        continue;
      }
      const field = this.pick(fields);
      parts.push(this.field(field, depth));
    }
    if (this.chance(0.1)) parts.push(`... on ${typeName} { ${this.field(this.pick(fields), depth + 1)} }`);
    if (this.chance(0.08)) {
      const name = `F${this.fragments.length}`;
      this.fragments.push(''); // reserve the name before recursing
      const body = this.field(this.pick(fields), depth + 1);
      this.fragments[Number(name.slice(1))] = `fragment ${name} on ${typeName} { ${body} }`;
      parts.push(`...${name}`, ...(this.chance(0.3) ? [`...${name}`] : []));
    }
    return parts.join(' ');
  }

  private field(field: Field, depth: number): string {
    const alias = this.chance(0.2) ? `a${this.aliasCount++}: ` : '';
    const args = field.args
      .filter((a) => (a.type.kind === 'NON_NULL' ? this.chance(0.93) : this.chance(0.3)))
      .map((a) => `${a.name}: ${this.value(a.type)}`);
    if (this.chance(0.03)) args.push(`bogus: ${this.wrongValue()}`);
    const argText = args.length > 0 ? `(${args.join(', ')})` : '';
    const target = this.named(field.type);
    const isObject = this.types.get(target.name ?? '')?.kind === 'OBJECT';
    let sub = '';
    if (isObject && !this.chance(0.03)) {
      const inner = depth < 9 && this.chance(0.75) ? this.selection(target.name!, depth + 1) : '';
      sub = ` { ${inner || 'id'} }`;
    } else if (!isObject && this.chance(0.03)) sub = ' { id }';
    return `${alias}${field.name}${argText}${sub}`;
  }

  document(): string {
    this.fragments = [];
    const root = this.selection(this.queryType, 1) || '__typename';
    const operation = this.chance(0.1) ? `query Q${Math.floor(this.random() * 3)} ` : '';
    return `${operation}{ ${root} }\n${this.fragments.filter(Boolean).join('\n')}`;
  }
}

describe('random GraphQL documents from the unified schema (fixed seed)', () => {
  it('never answers 5xx and never hangs', async () => {
    const schema = await postJson('introspection', `${stack.urls.public}/graphql`, { query: introspection });
    expect(schema.status, show(schema)).toBe(200);
    const data = schema.body?.data as { __schema: { queryType: { name: string }; types: SchemaType[] } };
    const fuzzer = new DocumentFuzzer(20_261_123, data.__schema.types, data.__schema.queryType.name, [
      ids.farm,
      ids.coop,
      ids.hen,
    ]);
    const failures: string[] = [];
    for (let i = 0; i < 150; i++) {
      const query = fuzzer.document();
      const base = stack.urls.public;
      for (let round = 0; round < 2; round++) {
        try {
          const a = await postJson(`fuzz #${i}`, `${base}/graphql`, { query });
          expectAnsweredOrRefused(a);
        } catch (error) {
          failures.push(
            `#${i} ${query.slice(0, 300)}\n  ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
          );
          break;
        }
      }
    }
    await expectHealthy(`${stack.urls.public}/graphql`, 'the random documents');
    expect(failures, failures.join('\n')).toEqual([]);
  });
});

describe('the whole suite', () => {
  it('saw no 5xx answer anywhere', () => {
    expect(seen.length).toBeGreaterThan(100);
    const failures = seen.filter((s) => s.status >= 500);
    expect(failures, failures.map((f) => `${f.label}: ${f.status}`).join('\n')).toEqual([]);
  });
});
