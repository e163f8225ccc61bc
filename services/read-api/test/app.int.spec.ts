import { afterEach, describe, expect, it } from 'vitest';
import { type Fixture, fixture, gql, seed } from './helpers.js';

let f: Fixture;
afterEach(async () => f.close());

describe('health and readiness', () => {
  it('/health answers 200', async () => {
    f = await fixture();
    const r = await f.app.inject({ url: '/health' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ status: 'ok' });
  });

  it('/ready answers 200 with the positions the store reflects', async () => {
    f = await fixture();
    const position = await seed(f);
    const r = await f.app.inject({ url: '/ready' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ status: 'ready', replica: position, projections: position });
  });

  it('/ready answers 503 with a code when the store does not answer', async () => {
    f = await fixture();
    await f.store.primary.close();
    const r = await f.app.inject({ url: '/ready' });
    expect(r.statusCode).toBe(503);
    expect(r.json()).toMatchObject({ status: 'unavailable', code: 'EGGMESH_UNAVAILABLE' });
  });
});

describe('CORS', () => {
  it('allows no other origin by default', async () => {
    f = await fixture();
    const r = await gql(f.app, '/graphql', '{ farms { id } }', {
      headers: { origin: 'https://dash.example' },
    });
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await f.app.inject({
      method: 'OPTIONS',
      url: '/farm/graph',
      headers: { origin: 'https://dash.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBeGreaterThanOrEqual(400);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows any origin with *, on GraphQL and plain routes', async () => {
    f = await fixture({ env: { EGGMESH_CORS_ORIGIN: '*' } });
    const r = await gql(f.app, '/graphql', '{ farms { id } }', {
      headers: { origin: 'https://dash.example' },
    });
    expect(r.headers['access-control-allow-origin']).toBe('*');
    const preflight = await f.app.inject({
      method: 'OPTIONS',
      url: '/farm/graph',
      headers: { origin: 'https://dash.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
  });

  it('follows the configured origin', async () => {
    f = await fixture({ env: { EGGMESH_CORS_ORIGIN: 'https://dash.example' } });
    const r = await f.app.inject({ url: '/health', headers: { origin: 'https://dash.example' } });
    expect(r.headers['access-control-allow-origin']).toBe('https://dash.example');
  });
});

describe('GraphiQL', () => {
  it('serves the IDE at /graphiql, pointed at /graphql, with every script and stylesheet from here', async () => {
    f = await fixture();
    const page = await f.app.inject({ url: '/graphiql' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('data-endpoint="/graphql"');
    // No inline script (a `script-src 'self'` policy allows the page) and no other host.
    expect(page.body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBe(6);
    for (const source of sources) {
      expect(source).toMatch(/^\/graphiql\/assets\//);
      const asset = await f.app.inject({ url: source });
      expect(asset.statusCode, source).toBe(200);
      expect(asset.headers['content-type']).toMatch(
        source.endsWith('.css') ? /^text\/css/ : /^text\/javascript/,
      );
      expect(asset.body.length).toBeGreaterThan(50);
    }
    expect((await f.app.inject({ url: '/graphiql/assets/nothing.js' })).statusCode).toBe(404);
    expect((await f.app.inject({ url: '/graphiql/assets/..%2Fpackage.json' })).statusCode).toBe(404);
  });

  it('only on the unified endpoint', async () => {
    f = await fixture();
    expect((await f.app.inject({ url: '/farm/graphiql' })).statusCode).toBe(404);
  });
});

describe('plain routes', () => {
  it('answer an unknown path with a coded 404', async () => {
    f = await fixture();
    const r = await f.app.inject({ url: '/nope' });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ error: 'no route GET /nope', code: 'EGGMESH_ROUTE_NOT_FOUND' });
  });
});
