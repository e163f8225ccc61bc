import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningStack, startStack } from './helpers.js';

// The public port is the read-api: it answers the REST reads (GET and HEAD of /<entity>/api…) itself,
// with the write-api's own read routes (@eggmesh/rest) over the read-only data files, and forwards
// every write. What a client sees must not change: the same answers as the write-api's, and
// its own writes visible to its next read.

/** The supervisor's child running `script` (its pid, from /proc). */
function childPid(parent: number, script: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === parent && cmdline.includes(script)) return Number(entry);
    } catch {
      // the process ended while we looked
    }
  }
  throw new Error(`no child of ${parent} runs ${script}`);
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | null>;
}

/** Headers a client may depend on; Date, request ids and rate-limit counters differ by nature. */
const compared = ['content-type', 'content-length', 'x-next-cursor', 'allow', 'cache-control', 'etag'];

async function get(base: string, path: string, method = 'GET'): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { method });
  const headers: Record<string, string | null> = {};
  for (const name of compared) headers[name] = response.headers.get(name);
  return { status: response.status, body: await response.text(), headers };
}

describe('REST reads through the front door on SQLite', () => {
  let stack: RunningStack;
  const farms: Record<string, unknown>[] = [];
  let created = 0;

  beforeAll(async () => {
    stack = await startStack();
    for (const name of ['North', 'South', 'East']) {
      const response = await fetch(`${stack.urls.public}/farm/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name, farm_type: 'local_farm', zone: 'north' }),
      });
      expect(response.status).toBe(201);
      farms.push((await response.json()) as Record<string, unknown>);
    }
    created = Date.now();
    const update = await fetch(`${stack.urls.public}/farm/api/${farms[0]!.id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'North renamed', farm_type: 'local_farm', zone: 'north' }),
    });
    expect(update.status).toBe(200);
  }, 60_000);

  afterAll(async () => stack?.stop());

  it('answers every kind of REST read as the write-api does, errors included', async () => {
    const [a, b] = [farms[0]!.id, farms[1]!.id];
    const paths = [
      `/farm/api/${a}`,
      `/farm/api/${String(a).toUpperCase()}`,
      `/farm/api/${a}?at=${created}`,
      `/farm/api/${a}?at=1`,
      '/farm/api/00000000-0000-4000-8000-000000000000',
      '/farm/api/not-a-uuid',
      '/farm/api',
      '/farm/api?limit=2',
      '/farm/api?limit=0',
      '/farm/api?at=x',
      `/farm/api/bulk?ids=${a},${b}`,
      '/farm/api/bulk',
      `/farm/api/${a}/extra`,
      '/hen/api',
      '/container_inventory/api',
      '/container_inventory/api/00000000-0000-4000-8000-000000000000',
      '/nothing/api',
    ];
    for (const path of paths) {
      const [front, direct] = [await get(stack.urls.public, path), await get(stack.urls.write, path)];
      expect(front, path).toEqual(direct);
    }
    const [front, direct] = [
      await get(stack.urls.public, `/farm/api/${a}`, 'HEAD'),
      await get(stack.urls.write, `/farm/api/${a}`, 'HEAD'),
    ];
    expect(front).toEqual(direct);
    expect(JSON.parse((await get(stack.urls.public, `/farm/api/${a}`)).body)).toMatchObject({
      name: 'North renamed',
    });
    expect(JSON.parse((await get(stack.urls.public, `/farm/api/${a}?at=${created}`)).body)).toMatchObject({
      name: 'North',
    });
  });

  it('shows a client its own write on its next read, every time', async () => {
    for (let i = 0; i < 200; i++) {
      const post = await fetch(`${stack.urls.public}/coop/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: `Coop ${i}`,
          farm_id: farms[i % 3]!.id,
          capacity: 10,
          coop_type: 'barn',
        }),
      });
      expect(post.status).toBe(201);
      const written = (await post.json()) as { id: string };
      const read = await fetch(`${stack.urls.public}/coop/api/${written.id}`);
      expect(read.status, `round ${i}`).toBe(200);
      expect(await read.json()).toEqual(written);
    }
  });

  it("counts every answer once in the public port's /metrics, by its route (a forwarded write by its write route)", async () => {
    const count = async (route: string, method: string) => {
      const text = await (await fetch(`${stack.urls.public}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) =>
          l.startsWith(
            `eggmesh_http_request_duration_seconds_count{route="${route}",method="${method}",status_class="2xx"}`,
          ),
        );
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    const before = {
      graph: await count('/farm/graph', 'POST'),
      read: await count('/farm/api/:id', 'GET'),
      write: await count('/:entity/api', 'POST'),
    };
    const graph = await fetch(`${stack.urls.public}/farm/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ getById(id: "${farms[2]!.id}") { name } }` }),
    });
    expect(graph.status).toBe(200);
    for (let i = 0; i < 2; i++)
      expect((await fetch(`${stack.urls.public}/farm/api/${farms[2]!.id}`)).status).toBe(200);
    const write = await fetch(`${stack.urls.public}/farm/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Counted', farm_type: 'local_farm', zone: 'north' }),
    });
    expect(write.status).toBe(201);
    expect({
      graph: (await count('/farm/graph', 'POST')) - before.graph,
      read: (await count('/farm/api/:id', 'GET')) - before.read,
      write: (await count('/:entity/api', 'POST')) - before.write,
    }).toEqual({ graph: 1, read: 2, write: 1 });
  });

  it('answers reads in its own process: a stopped write-api stalls no read', async () => {
    const writeApi = childPid(stack.process.pid!, 'write-api/dist/server.js');
    process.kill(writeApi, 'SIGSTOP');
    try {
      const read = await fetch(`${stack.urls.public}/farm/api/${farms[1]!.id}`, {
        signal: AbortSignal.timeout(5_000),
      });
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ name: 'South' });
    } finally {
      process.kill(writeApi, 'SIGCONT');
    }
  });
});
