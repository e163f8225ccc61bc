// What the apps' shared API client makes of the answers a real HTTP server gives while it restarts: a
// body cut short and a 503 are "the server was lost, try again", a GraphQL refusal is the API's word.
// The browser's fetch and sessionStorage are Node's fetch aimed at this server and an empty store.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiError, graphql, isTransient, jsonBody } from '../api.js';

let server: Server;
let base = '';
const nodeFetch = globalThis.fetch;

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    if (path === '/cut') {
      // Headers and half the promised body, then the process "dies".
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('{"data":{"farms":[');
      setTimeout(() => request.socket.destroy(), 20);
      return;
    }
    if (path === '/starting') {
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'storage is not open yet', code: 'EGGMESH_UNAVAILABLE' }));
      return;
    }
    if (path === '/html') {
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html>Bad Gateway</html>');
      return;
    }
    response.writeHead(400, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ errors: [{ message: 'Cannot query field "nope"', extensions: {} }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  vi.stubGlobal('sessionStorage', { getItem: () => null, setItem: () => {} });
});

afterAll(async () => {
  vi.unstubAllGlobals();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The apps' `/graphql` aimed at one path of the test server. */
function routeGraphqlTo(path: string): void {
  vi.stubGlobal('fetch', (_url: string, init: RequestInit) => nodeFetch(`${base}${path}`, init));
}

describe('the apps API client while a server restarts', () => {
  it('a body cut short rejects as the network does (TypeError), not as a refusal worded "200 OK"', async () => {
    routeGraphqlTo('/cut');
    const error = await graphql('{ farms { id } }').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(isTransient(error)).toBe(true);
  });

  it("a 503 while the server starts is the API's own message, and transient", async () => {
    routeGraphqlTo('/starting');
    const error = await graphql('{ farms { id } }').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
    expect((error as ApiError).message).toBe('503 Service Unavailable');
    expect(isTransient(error)).toBe(true);
  });

  it("a proxy's HTML page is no JSON: an empty body, the status, transient for a 502", async () => {
    const response = await nodeFetch(`${base}/html`);
    expect(await jsonBody(response)).toEqual({});
    routeGraphqlTo('/html');
    const error = await graphql('{ farms { id } }').catch((e: unknown) => e);
    expect((error as ApiError).status).toBe(502);
    expect(isTransient(error)).toBe(true);
  });

  it('a GraphQL refusal is not transient: the page shows it', async () => {
    routeGraphqlTo('/refused');
    const error = await graphql('{ nope }').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe('Cannot query field "nope"');
    expect(isTransient(error)).toBe(false);
    expect(isTransient(new Error('anything else'))).toBe(false);
  });
});
