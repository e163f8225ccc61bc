import { buildApp } from '@eggmesh/edge';
import { loadConfig } from '@eggmesh/service-kit';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamFor } from '../src/routes.js';

/** Two tiny real HTTP servers stand in for the write and read services; the edge proxies to them. */
async function upstream(name: string): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  app.all('/*', async (request) => ({
    served_by: name,
    method: request.method,
    url: request.url,
    body: request.body,
  }));
  app.get('/ready', async () => ({ ok: true }));
  // An answer larger than what the edge sends in one write (it streams those).
  app.get('/big/graph', async () => ({ big: 'x'.repeat(3 * 1024 * 1024) }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url };
}

describe('edge', () => {
  let write: Awaited<ReturnType<typeof upstream>>;
  let read: Awaited<ReturnType<typeof upstream>>;
  let edge: FastifyInstance;

  beforeAll(async () => {
    write = await upstream('write');
    read = await upstream('read');
    edge = await buildApp({
      config: loadConfig({ EGGMESH_WRITE_API_URL: write.url, EGGMESH_READ_API_URL: read.url }),
    });
    await edge.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await edge.close();
    await write.app.close();
    await read.app.close();
  });

  it('routes REST and docs to the write-api and GraphQL to the read-api', () => {
    expect(upstreamFor('/farm/api')).toBe('write');
    expect(upstreamFor('/farm/api/bulk')).toBe('write');
    expect(upstreamFor('/lay_report/api/0b6f8f9e-1c8e-4a57-9d55-3c1d8d1c1d1c')).toBe('write');
    expect(upstreamFor('/docs/')).toBe('write');
    expect(upstreamFor('/openapi.json')).toBe('write');
    expect(upstreamFor('/farm/graph')).toBe('read');
    expect(upstreamFor('/graphql')).toBe('read');
    expect(upstreamFor('/graphiql')).toBe('read');
    expect(upstreamFor('/graphiql/assets/graphiql.min.js')).toBe('read');
    expect(upstreamFor('/farm/apix')).toBeNull();
    expect(upstreamFor('/')).toBeNull();
  });

  it('forwards method, path, query and body unchanged', async () => {
    const post = await edge.inject({
      method: 'POST',
      url: '/farm/api/bulk?x=1',
      payload: [{ name: 'a' }],
    });
    expect(post.json()).toEqual({
      served_by: 'write',
      method: 'POST',
      url: '/farm/api/bulk?x=1',
      body: [{ name: 'a' }],
    });
    const graph = await edge.inject({
      method: 'POST',
      url: '/hen/graph',
      payload: { query: '{ getAll { id } }' },
    });
    expect(graph.json()).toMatchObject({
      served_by: 'read',
      url: '/hen/graph',
      body: { query: '{ getAll { id } }' },
    });
  });

  it('answers unknown paths itself and reports a dead upstream as 502', async () => {
    const missing = await edge.inject({ method: 'GET', url: '/nothing' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('EGGMESH_ROUTE_NOT_FOUND');
    const dead = await buildApp({
      config: loadConfig({ EGGMESH_WRITE_API_URL: 'http://127.0.0.1:9', EGGMESH_READ_API_URL: read.url }),
    });
    const response = await dead.inject({ method: 'GET', url: '/farm/api' });
    expect(response.statusCode).toBe(502);
    expect(response.json().code).toBe('EGGMESH_UPSTREAM_UNAVAILABLE');
    const ready = await dead.inject({ method: 'GET', url: '/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ write: false, read: true });
    await dead.close();
  });

  it('forwards over a real connection, keep-alive, and streams a large answer whole', async () => {
    const address = edge.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}/farm/api/${i}?q=${i}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ i }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        served_by: 'write',
        method: 'PUT',
        url: `/farm/api/${i}?q=${i}`,
        body: { i },
      });
    }
    const res = await fetch(`${base}/big/graph`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { big: string }).big.length).toBe(3 * 1024 * 1024);
  });

  it('answers GET / with a landing page that links to GraphiQL, the docs, /health and /metrics', async () => {
    const res = await edge.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    for (const link of ['/graphiql', '/docs', '/api.md', '/health', '/metrics'])
      expect(res.body).toContain(`href="${link}"`);
    const guide = await edge.inject({ method: 'GET', url: '/api.md' });
    expect(guide.statusCode).toBe(200);
    expect(guide.body).toContain('EGGMESH_ROUTE_NOT_FOUND');
  });

  it('gives its own answers (404s included) the CORS headers the services send', async () => {
    const missing = await edge.inject({
      method: 'GET',
      url: '/nothing',
      headers: { origin: 'https://x.example' },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['access-control-allow-origin']).toBe('*');
    const listed = await buildApp({
      config: loadConfig({
        EGGMESH_WRITE_API_URL: write.url,
        EGGMESH_READ_API_URL: read.url,
        EGGMESH_CORS_ORIGIN: 'https://dash.example',
      }),
    });
    const ok = await listed.inject({
      method: 'GET',
      url: '/nothing',
      headers: { origin: 'https://dash.example' },
    });
    expect(ok.headers['access-control-allow-origin']).toBe('https://dash.example');
    const foreign = await listed.inject({
      method: 'GET',
      url: '/nothing',
      headers: { origin: 'https://x.example' },
    });
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    await listed.close();
  });

  it('answers the GraphQL paths in process when given the read side, and still forwards REST', async () => {
    const embedded = await buildApp({
      config: loadConfig({ EGGMESH_WRITE_API_URL: write.url, EGGMESH_READ_API_URL: 'http://127.0.0.1:9' }),
      read: (request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ served_by: 'embedded', url: request.url }));
      },
    });
    await embedded.listen({ port: 0, host: '127.0.0.1' });
    try {
      const address = embedded.server.address();
      const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      for (const path of ['/hen/graph', '/graphql?x=1', '/graphiql']) {
        const res = await fetch(`${base}${path}`, {
          method: path === '/graphiql' ? 'GET' : 'POST',
          body: path === '/graphiql' ? undefined : '{}',
        });
        expect(await res.json()).toEqual({ served_by: 'embedded', url: path });
      }
      const rest = await fetch(`${base}/farm/api`);
      expect(((await rest.json()) as { served_by: string }).served_by).toBe('write');
      const injected = await embedded.inject({ method: 'POST', url: '/farm/graph', payload: {} });
      expect(injected.json()).toEqual({ served_by: 'embedded', url: '/farm/graph' });
    } finally {
      await embedded.close();
    }
  });
});
