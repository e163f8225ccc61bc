// `pnpm bench --equipped-baselines`: the bare baselines wear eggmesh's service plugin, so a run sets our
// services against servers with the same security headers, overload shedding and metrics. Checked on
// the built baselines as the bench starts them (perf/dist), bare and equipped.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, repoRoot } from '../src/lib/env.js';
import { ChildService } from '../src/lib/proc.js';

const dir = mkdtempSync(join(tmpdir(), 'eggmesh-equipped-'));
const started: ChildService[] = [];
afterAll(async () => {
  for (const service of started) await service.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function baseline(name: 'bare-graphql' | 'bare-rest', equipped: boolean): Promise<string> {
  const port = await freePort();
  const service = await ChildService.start({
    name,
    entry: join(repoRoot, `perf/dist/baselines/${name}.js`),
    env: {
      PORT: String(port),
      BARE_DB: join(dir, `${name}-${port}.db`),
      ...(equipped ? { BARE_EQUIPPED: '1' } : {}),
    },
    cwd: repoRoot,
    healthUrl: `http://127.0.0.1:${port}/health`,
    logFile: join(dir, `${name}-${port}.log`),
  });
  started.push(service);
  return `http://127.0.0.1:${port}`;
}

describe('the bench baselines, bare and equipped', () => {
  it.each(['bare-graphql', 'bare-rest'] as const)('%s', async (name) => {
    const probe = name === 'bare-graphql' ? '/farm/graph' : '/farm/api';
    const ask = (base: string) =>
      name === 'bare-graphql'
        ? fetch(`${base}${probe}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ getAll { id } }' }),
          })
        : fetch(`${base}${probe}`);
    const bare = await baseline(name, false);
    const equipped = await baseline(name, true);

    const plain = await ask(bare);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-security-policy')).toBeNull();
    expect((await fetch(`${bare}/metrics`)).status).toBe(404);

    const dressed = await ask(equipped);
    expect(dressed.status).toBe(200);
    expect(dressed.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    expect(dressed.headers.get('x-content-type-options')).toBe('nosniff');
    const metrics = await (await fetch(`${equipped}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`eggmesh_http_request_duration_seconds_count\\{route="${probe}"`));
    // A body in another charset is refused as the services refuse it.
    const latin1 = await fetch(`${equipped}${probe}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=latin1' },
      body: '{}',
    });
    expect(latin1.status).toBe(415);
  });
});
