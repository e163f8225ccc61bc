import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDescendants } from '../../../infra/processes.mjs';
import { freePort, type RunningStack, startStack, until } from './helpers.js';

// `EGGMESH_FRONT_DOOR=haproxy pnpm start`: HAProxy on EDGE_PORT, the Node edge behind it. A client of
// the one base URL sees the same API as through the Node edge.

const ensureTools = fileURLToPath(new URL('../../../infra/ensure-tools.sh', import.meta.url));

/** A process's command line, or '' once it is gone. */
const command = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
};

describe('the stack with HAProxy as the front door', () => {
  let stack: RunningStack;
  let nodeEdge = '';

  beforeAll(async () => {
    execFileSync('bash', [ensureTools, 'haproxy'], { stdio: 'inherit' });
    const port = await freePort();
    nodeEdge = `http://127.0.0.1:${port}`;
    stack = await startStack({ EGGMESH_FRONT_DOOR: 'haproxy', EDGE_NODE_PORT: String(port) });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('writes through REST and reads it back through GraphQL and REST on the one base URL', async () => {
    const created = await fetch(`${stack.urls.edge}/farm/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ferme « é »', farm_type: 'local_farm', zone: 'north', owner: 'o' }),
    });
    expect(created.status).toBe(201);
    const farm = (await created.json()) as { id: string; name: string };
    expect(farm.name).toBe('Ferme « é »');
    const rest = await fetch(`${stack.urls.edge}/farm/api/${farm.id}`);
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as { name: string }).name).toBe('Ferme « é »');
    const graph = await fetch(`${stack.urls.edge}/farm/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ getById(id: "${farm.id}") { id name } }` }),
    });
    expect(graph.status).toBe(200);
    expect(await graph.json()).toEqual({ data: { getById: { id: farm.id, name: 'Ferme « é »' } } });
  });

  it('passes everything else to the Node edge: /health is the edge’s, and its errors are eggmesh’s', async () => {
    const health = (await (await fetch(`${stack.urls.edge}/health`)).json()) as {
      service: string;
      pid: number;
    };
    const direct = (await (await fetch(`${nodeEdge}/health`)).json()) as { service: string; pid: number };
    expect(health.service).toBe('edge');
    expect(health.pid).toBe(direct.pid);
    const missing = await fetch(`${stack.urls.edge}/no/such/path`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('EGGMESH_ROUTE_NOT_FOUND');
    // The banner comes once every service (HAProxy included) answered /health as itself.
    const banner = await until(async () =>
      stack.output.join('').includes('eggmesh is up') ? stack.output.join('') : undefined,
    );
    expect(banner).toContain(`front door  HAProxy on ${stack.urls.edge}`);
  });

  it('stops HAProxy with the rest on SIGINT', async () => {
    const haproxy = withDescendants(stack.process.pid!).filter((pid) => command(pid).startsWith('haproxy '));
    expect(haproxy.length).toBe(1);
    await stack.stop();
    expect(stack.process.exitCode).toBe(0);
    for (const pid of haproxy) expect(command(pid), `HAProxy ${pid} still runs`).toBe('');
  });
});
