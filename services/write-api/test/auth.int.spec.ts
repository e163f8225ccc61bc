import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loggerOptions, parseConfig } from '@eggmesh/service-kit';
import { dataFiles, openPrimaryStore, ProjectionReader, SqliteReadStore } from '@eggmesh/store-sqlite';
import { buildApp } from '@eggmesh/write-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, newId, send, startApp, type TestApp, tempDir } from './helpers.js';
import { bearer, hs256, nowS, rs256, rsaKey, unsigned } from './jwt.js';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const farm = { name: 'Auth Farm', farm_type: 'local_farm', zone: 'north', owner: 'Ann' };
const container = { name: 'Shelf', container_type: 'market_shelf', capacity: 10, zone: 'south' };

describe('writes with EGGMESH_AUTH=none (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => t.close());

  it('take no token', async () => {
    expect((await send(t.app, 'POST', '/farm/api', farm)).statusCode).toBe(201);
  });
});

describe('writes with EGGMESH_AUTH=jwt and an HS256 secret', () => {
  let t: TestApp;
  const token = (claims: Record<string, unknown>) => hs256(SECRET, claims);
  beforeAll(async () => {
    t = await startApp({ EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: SECRET });
  });
  afterAll(async () => t.close());

  const unauthenticated = (res: Awaited<ReturnType<typeof send>>, reason: RegExp) => {
    const body = expectError(res, 401, 'EGGMESH_UNAUTHENTICATED');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="eggmesh"/);
    expect(body.error).toMatch(reason);
  };

  it('refuses a write without a token: 401 with WWW-Authenticate: Bearer, nothing written', async () => {
    const head = await t.head();
    const res = await send(t.app, 'POST', '/farm/api', farm);
    unauthenticated(res, /bearer token/);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="eggmesh"');
    expect(await t.head()).toBe(head);
  });

  it('refuses a malformed, a badly signed, an unsigned and a non-Bearer token', async () => {
    unauthenticated(await send(t.app, 'POST', '/farm/api', farm, bearer('not.a.jwt')), /not valid/);
    const forged = hs256('another-secret-that-is-also-32-chars-long', { scope: 'eggmesh:write' });
    unauthenticated(await send(t.app, 'POST', '/farm/api', farm, bearer(forged)), /signature/);
    const none = unsigned({ scope: 'eggmesh:write' });
    unauthenticated(await send(t.app, 'POST', '/farm/api', farm, bearer(none)), /not valid|algorithm/);
    const basic = { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` };
    unauthenticated(await send(t.app, 'POST', '/farm/api', farm, basic), /Bearer/);
    const res = await send(t.app, 'POST', '/farm/api', farm, bearer(forged));
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  it('honours exp and nbf, with a small clock skew', async () => {
    const expired = token({ scope: 'eggmesh:write', exp: nowS() - 120 });
    unauthenticated(await send(t.app, 'POST', '/farm/api', farm, bearer(expired)), /expired/);
    const early = token({ scope: 'eggmesh:write', nbf: nowS() + 120 });
    unauthenticated(await send(t.app, 'POST', '/farm/api', farm, bearer(early)), /not valid yet/);
    const justExpired = token({ scope: 'eggmesh:write', exp: nowS() - 5 });
    expect((await send(t.app, 'POST', '/farm/api', farm, bearer(justExpired))).statusCode).toBe(201);
    const almostValid = token({ scope: 'eggmesh:write', nbf: nowS() + 5 });
    expect((await send(t.app, 'POST', '/farm/api', farm, bearer(almostValid))).statusCode).toBe(201);
  });

  it('requires exp, caps the lifetime (EGGMESH_JWT_MAX_LIFETIME_S, 24 h) and refuses iat in the future', async () => {
    const head = await t.head();
    const write = (claims: Record<string, unknown>) =>
      send(t.app, 'POST', '/farm/api', farm, bearer(token({ scope: 'eggmesh:write', ...claims })));
    unauthenticated(await write({ exp: undefined }), /no expiry/);
    unauthenticated(await write({ exp: 1e20 }), /longer than 86400 s/);
    unauthenticated(await write({ exp: nowS() + 86_400 + 600 }), /longer than 86400 s/);
    unauthenticated(await write({ iat: nowS() - 86_400 * 2, exp: nowS() + 600 }), /longer than 86400 s/);
    unauthenticated(await write({ iat: nowS() + 3600 }), /issued in the future/);
    expect(await t.head()).toBe(head);
    expect((await write({ exp: nowS() + 86_000 })).statusCode).toBe(201);
    expect((await write({ iat: nowS() + 5 })).statusCode).toBe(201);
    expect((await write({ iat: nowS() - 3600, exp: nowS() + 3600 })).statusCode).toBe(201);
  });

  it('refuses a token not in canonical base64url: padding, or another last character for the same bytes', async () => {
    const good = token({ scope: 'eggmesh:write' });
    const [h, p, sig] = good.split('.') as [string, string, string];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // A 32-byte HS256 signature is 43 characters: the last one's two low bits are unused.
    const last = alphabet.indexOf(sig.at(-1) as string);
    const sameBytes = `${sig.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(Buffer.from(sameBytes, 'base64url')).toEqual(Buffer.from(sig, 'base64url'));
    for (const variant of [`${h}.${p}.${sig}=`, `${h}.${p}.${sameBytes}`]) {
      unauthenticated(await send(t.app, 'POST', '/farm/api', farm, bearer(variant)), /canonical/);
    }
    expect((await send(t.app, 'POST', '/farm/api', farm, bearer(good))).statusCode).toBe(201);
  });

  it('answers 403 to a valid token without a write scope, naming the scope', async () => {
    for (const scope of [undefined, '', 'eggmesh:read', 'eggmesh:writer', 'eggmesh:write:coop']) {
      const res = await send(t.app, 'POST', '/farm/api', farm, bearer(token({ scope })));
      expectError(res, 403, 'EGGMESH_FORBIDDEN');
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="eggmesh", error="insufficient_scope", scope="eggmesh:write:farm"',
      );
    }
  });

  it('eggmesh:write grants every write: create, bulk, replace, delete', async () => {
    const auth = bearer(token({ sub: 'writer', scope: 'openid eggmesh:write' }));
    const created = await send(t.app, 'POST', '/farm/api', farm, auth);
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    expect((await send(t.app, 'POST', '/container/api/bulk', [container], auth)).statusCode).toBe(201);
    expect((await send(t.app, 'PUT', `/farm/api/${id}`, { ...farm, zone: 'south' }, auth)).statusCode).toBe(
      200,
    );
    expectError(await send(t.app, 'DELETE', `/farm/api/${id}`), 401, 'EGGMESH_UNAUTHENTICATED');
    expect((await send(t.app, 'DELETE', `/farm/api/${id}`, undefined, auth)).statusCode).toBe(200);
  });

  it('eggmesh:write:<entity> grants the writes of that entity only', async () => {
    const auth = bearer(token({ scope: 'eggmesh:write:farm eggmesh:write:hen' }));
    expect((await send(t.app, 'POST', '/farm/api', farm, auth)).statusCode).toBe(201);
    expectError(await send(t.app, 'POST', '/container/api', container, auth), 403, 'EGGMESH_FORBIDDEN');
    expectError(
      await send(t.app, 'PUT', `/container/api/${newId()}`, container, auth),
      403,
      'EGGMESH_FORBIDDEN',
    );
  });

  it('a scope claim given as an array of strings works too', async () => {
    const auth = bearer(token({ scope: ['eggmesh:write:farm'] }));
    expect((await send(t.app, 'POST', '/farm/api', farm, auth)).statusCode).toBe(201);
  });

  it('leaves reads, health and the docs open', async () => {
    expect((await send(t.app, 'GET', '/farm/api')).statusCode).toBe(200);
    expect((await send(t.app, 'GET', `/farm/api/${newId()}`)).statusCode).toBe(404);
    expect((await send(t.app, 'POST', '/farm/api/bulk/read', { ids: [newId()] })).statusCode).toBe(200);
    expect((await send(t.app, 'GET', '/health')).statusCode).toBe(200);
    expect((await send(t.app, 'GET', '/openapi.json')).statusCode).toBe(200);
  });

  it('documents 401 and 403 on every write in /openapi.json, and not on reads', async () => {
    const doc = (await send(t.app, 'GET', '/openapi.json')).json() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const farmOps = doc.paths['/farm/api']!;
    expect(Object.keys(farmOps.post!.responses)).toEqual(expect.arrayContaining(['401', '403']));
    expect(Object.keys(doc.paths['/farm/api/{id}']!.delete!.responses)).toEqual(
      expect.arrayContaining(['401', '403']),
    );
    expect(Object.keys(farmOps.get!.responses)).not.toContain('401');
  });

  it('checks the token before reading the body: an unauthenticated oversized upload gets 401', async () => {
    const res = await send(t.app, 'POST', '/farm/api', 'x'.repeat(2_000_000));
    expectError(res, 401, 'EGGMESH_UNAUTHENTICATED');
  });
});

describe('EGGMESH_JWT_ISSUER and EGGMESH_JWT_AUDIENCE', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({
      EGGMESH_AUTH: 'jwt',
      EGGMESH_JWT_SECRET: SECRET,
      EGGMESH_JWT_ISSUER: 'https://issuer.test',
      EGGMESH_JWT_AUDIENCE: 'eggmesh',
    });
  });
  afterAll(async () => t.close());

  it('accept only tokens from that issuer for that audience', async () => {
    const claims = { scope: 'eggmesh:write', iss: 'https://issuer.test', aud: 'eggmesh' };
    expect((await send(t.app, 'POST', '/farm/api', farm, bearer(hs256(SECRET, claims)))).statusCode).toBe(
      201,
    );
    const other = hs256(SECRET, { ...claims, iss: 'https://other.test' });
    expect((await send(t.app, 'POST', '/farm/api', farm, bearer(other))).json()).toMatchObject({
      code: 'EGGMESH_UNAUTHENTICATED',
      error: expect.stringMatching(/issuer/),
    });
    const elsewhere = hs256(SECRET, { ...claims, aud: 'billing' });
    expectError(
      await send(t.app, 'POST', '/farm/api', farm, bearer(elsewhere)),
      401,
      'EGGMESH_UNAUTHENTICATED',
    );
  });
});

describe('writes with EGGMESH_AUTH=jwt and a JWKS file (RS256)', () => {
  let t: TestApp;
  const key = rsaKey('key-1');
  const stranger = rsaKey('key-1');
  beforeAll(async () => {
    const dir = tempDir('eggmesh-jwks-');
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify(key.jwks));
    t = await startApp({ EGGMESH_AUTH: 'jwt', EGGMESH_JWKS: file });
  });
  afterAll(async () => t.close());

  it('accepts a token signed by a key of the set and refuses one signed by another key', async () => {
    const good = rs256(key, { scope: 'eggmesh:write' });
    expect((await send(t.app, 'POST', '/farm/api', farm, bearer(good))).statusCode).toBe(201);
    const bad = rs256(stranger, { scope: 'eggmesh:write' });
    expectError(await send(t.app, 'POST', '/farm/api', farm, bearer(bad)), 401, 'EGGMESH_UNAUTHENTICATED');
    const unknownKid = rs256({ ...key, kid: 'key-2' }, { scope: 'eggmesh:write' });
    expectError(
      await send(t.app, 'POST', '/farm/api', farm, bearer(unknownKid)),
      401,
      'EGGMESH_UNAUTHENTICATED',
    );
  });

  it('refuses an HS256 token made with the public key as its secret (algorithm confusion)', async () => {
    const n = String(key.jwks.keys[0]!.n);
    const confused = hs256(n, { scope: 'eggmesh:write' }, { kid: 'key-1' });
    expectError(
      await send(t.app, 'POST', '/farm/api', farm, bearer(confused)),
      401,
      'EGGMESH_UNAUTHENTICATED',
    );
  });

  it('expired RS256 tokens are refused too', async () => {
    const expired = rs256(key, { scope: 'eggmesh:write', exp: nowS() - 3600 });
    const res = await send(t.app, 'POST', '/farm/api', farm, bearer(expired));
    expect(expectError(res, 401, 'EGGMESH_UNAUTHENTICATED').error).toMatch(/expired/);
  });
});

describe('reads with EGGMESH_AUTH_READS=true', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: SECRET, EGGMESH_AUTH_READS: 'true' });
  });
  afterAll(async () => t.close());

  it('need eggmesh:read on GET, bulk GET and bulk read; a write scope alone is not enough', async () => {
    const ids = [newId()];
    const reads = [
      () => send(t.app, 'GET', '/farm/api'),
      () => send(t.app, 'GET', `/farm/api/${ids[0]}`),
      () => send(t.app, 'GET', `/farm/api/bulk?ids=${ids[0]}`),
      () => send(t.app, 'POST', '/farm/api/bulk/read', { ids }),
      () => send(t.app, 'GET', '/hen_productivity/api'),
    ];
    const reader = bearer(hs256(SECRET, { scope: 'eggmesh:read' }));
    const writer = bearer(hs256(SECRET, { scope: 'eggmesh:write' }));
    for (const read of reads) {
      const anonymous = await read();
      expectError(anonymous, 401, 'EGGMESH_UNAUTHENTICATED');
    }
    expectError(await send(t.app, 'GET', '/farm/api', undefined, writer), 403, 'EGGMESH_FORBIDDEN');
    expect((await send(t.app, 'GET', '/farm/api', undefined, reader)).statusCode).toBe(200);
    expect((await send(t.app, 'GET', `/farm/api/${ids[0]}`, undefined, reader)).statusCode).toBe(404);
    expect((await send(t.app, 'GET', `/farm/api/bulk?ids=${ids[0]}`, undefined, reader)).statusCode).toBe(
      200,
    );
    expect((await send(t.app, 'POST', '/farm/api/bulk/read', { ids }, reader)).statusCode).toBe(200);
    expectError(await send(t.app, 'POST', '/farm/api', farm, reader), 403, 'EGGMESH_FORBIDDEN');
    expect((await send(t.app, 'GET', '/health')).statusCode).toBe(200);
  });
});

describe('secrets and tokens stay out of the logs', () => {
  it('logs no token and no secret, whatever the request, with request logging on at trace level', async () => {
    const dir = tempDir();
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const config = parseConfig({
      EGGMESH_DATA_DIR: dir,
      EGGMESH_AUTH: 'jwt',
      EGGMESH_JWT_SECRET: SECRET,
      EGGMESH_LOG_REQUESTS: 'true',
      EGGMESH_LOG_LEVEL: 'trace',
    });
    const files = dataFiles(dir);
    const primary = openPrimaryStore({ file: files.primary });
    const reader = new SqliteReadStore(primary, new ProjectionReader(files.projectionsDir));
    const app = await buildApp({
      config,
      primary,
      reader,
      logger: { ...loggerOptions(config, 'write-api'), stream },
    });
    try {
      const good = hs256(SECRET, { scope: 'eggmesh:write' });
      const weak = hs256(SECRET, { scope: 'eggmesh:read' });
      const expired = hs256(SECRET, { scope: 'eggmesh:write', exp: nowS() - 3600 });
      const forged = hs256('x'.repeat(40), { scope: 'eggmesh:write' });
      for (const token of [good, weak, expired, forged]) {
        await send(app, 'POST', '/farm/api', farm, bearer(token));
        await send(app, 'POST', '/farm/api', '{"broken', bearer(token));
      }
      app.log.info({ headers: { authorization: `Bearer ${good}` } }, 'a handler logging the headers');
      app.log.info({ upstream: { headers: { authorization: `Bearer ${good}` } } }, 'and nested ones');
      expect(lines.length).toBeGreaterThan(8);
      const all = lines.join('');
      for (const token of [good, weak, expired, forged]) {
        expect(all).not.toContain(token);
        expect(all).not.toContain(token.split('.')[2]!);
      }
      expect(all).not.toContain(SECRET);
      expect(all).toContain('[redacted]');
      expect(JSON.stringify(config)).not.toContain(SECRET);
      expect(String(Object.keys(config.auth))).not.toContain('secret');
    } finally {
      await app.close();
      await reader.close();
    }
  });
});

describe('auth configuration', () => {
  const problems = (env: Record<string, string>) => {
    try {
      parseConfig(env);
      return '';
    } catch (error) {
      return String(error);
    }
  };

  it('refuses jwt without a key, with two keys, with a short secret, an unreadable JWKS or a plain-http one', () => {
    expect(problems({ EGGMESH_AUTH: 'jwt' })).toMatch(/exactly one of EGGMESH_JWT_SECRET .* or EGGMESH_JWKS/);
    expect(problems({ EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: SECRET, EGGMESH_JWKS: '/x.json' })).toMatch(
      /exactly one/,
    );
    expect(problems({ EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: 'short' })).toMatch(/EGGMESH_JWT_SECRET/);
    expect(problems({ EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: 'short' })).not.toContain('short');
    expect(problems({ EGGMESH_AUTH: 'jwt', EGGMESH_JWKS: '/no/such/jwks.json' })).toMatch(
      /EGGMESH_JWKS: cannot read/,
    );
    expect(problems({ EGGMESH_AUTH: 'jwt', EGGMESH_JWKS: 'http://keys.test/jwks' })).toMatch(/must be https/);
    expect(problems({ EGGMESH_AUTH_READS: 'true' })).toMatch(
      /EGGMESH_AUTH_READS=true needs EGGMESH_AUTH=jwt/,
    );
    expect(parseConfig({ EGGMESH_AUTH: 'jwt', EGGMESH_JWKS: 'https://keys.test/jwks' }).auth.jwksUrl).toBe(
      'https://keys.test/jwks',
    );
    expect(parseConfig({}).auth).toMatchObject({
      mode: 'none',
      reads: false,
      clockSkewS: 30,
      maxLifetimeS: 86_400,
    });
  });

  it('a write-api started with EGGMESH_AUTH=jwt and no key prints the problem and exits 2; with none it says writes are open', () => {
    const server = new URL('../dist/server.js', import.meta.url).pathname;
    const dir = tempDir();
    const refused = spawnSync(process.execPath, [server], {
      env: { PATH: process.env.PATH, EGGMESH_DATA_DIR: dir, EGGMESH_AUTH: 'jwt', WRITE_API_PORT: '0' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/EGGMESH_AUTH=jwt needs exactly one/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    void dataFiles;
  });
});
