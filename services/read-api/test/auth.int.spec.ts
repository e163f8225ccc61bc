import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, hs256, nowS } from '../../write-api/test/jwt.js';
import { type Fixture, fixture, gql } from './helpers.js';

const SECRET = 'a-read-secret-of-at-least-32-characters';
const QUERY = '{ farms { id } }';

describe('read-api with EGGMESH_AUTH=jwt', () => {
  let open: Fixture;
  let guarded: Fixture;
  beforeAll(async () => {
    open = await fixture({ env: { EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: SECRET } });
    guarded = await fixture({
      env: { EGGMESH_AUTH: 'jwt', EGGMESH_JWT_SECRET: SECRET, EGGMESH_AUTH_READS: 'true' },
    });
  });
  afterAll(async () => {
    await open.close();
    await guarded.close();
  });

  it('leaves queries open unless EGGMESH_AUTH_READS=true', async () => {
    expect((await gql(open.app, '/graphql', QUERY)).status).toBe(200);
    expect((await gql(open.app, '/farm/graph', '{ getAll { id } }')).status).toBe(200);
  });

  it('with EGGMESH_AUTH_READS=true, refuses a query without a token: 401 in GraphQL shape, with WWW-Authenticate', async () => {
    for (const path of ['/graphql', '/farm/graph']) {
      const res = await gql(guarded.app, path, path === '/graphql' ? QUERY : '{ getAll { id } }');
      expect(res.status, path).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="eggmesh"');
      expect(res.body).toMatchObject({
        data: null,
        errors: [{ extensions: { code: 'EGGMESH_UNAUTHENTICATED' } }],
      });
    }
    const get = await guarded.app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent(QUERY)}`,
    });
    expect(get.statusCode).toBe(401);
  });

  it('refuses expired tokens and tokens without eggmesh:read, and answers one that has it', async () => {
    const expired = hs256(SECRET, { scope: 'eggmesh:read', exp: nowS() - 600 });
    const res = await gql(guarded.app, '/graphql', QUERY, { headers: bearer(expired) });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].message).toMatch(/expired/);

    const writer = hs256(SECRET, { scope: 'eggmesh:write' });
    const forbidden = await gql(guarded.app, '/graphql', QUERY, { headers: bearer(writer) });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.errors[0].extensions.code).toBe('EGGMESH_FORBIDDEN');
    expect(forbidden.headers['www-authenticate']).toMatch(/insufficient_scope/);

    const reader = hs256(SECRET, { scope: 'eggmesh:read' });
    const ok = await gql(guarded.app, '/graphql', QUERY, { headers: bearer(reader) });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ data: { farms: [] } });
  });

  it('keeps GraphiQL, /health, /ready and /metrics open', async () => {
    for (const url of ['/graphiql', '/health', '/ready', '/metrics']) {
      expect((await guarded.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
  });
});
