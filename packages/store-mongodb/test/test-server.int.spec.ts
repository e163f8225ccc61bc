import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { isAlive } from '../../../infra/test/process.js';
import { mongodbUri } from './helpers.js';

const fetchJars = fileURLToPath(new URL('../../../infra/mongodb/fetch-jars.sh', import.meta.url));
const serverModule = fileURLToPath(new URL('../../../infra/mongodb/server.mjs', import.meta.url));

function run(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/bin/bash', [fetchJars], { env }, (error, _stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stderr });
    });
  });
}

describe('the MongoDB-wire test server', () => {
  it('reports wire version 13 so the current driver connects', async () => {
    const client = new MongoClient(mongodbUri(), { serverSelectionTimeoutMS: 5000 });
    try {
      const hello = await client.db('admin').command({ isMaster: 1 });
      expect(hello.maxWireVersion).toBe(13);
    } finally {
      await client.close();
    }
  });

  it('says what to install when java or maven is missing, instead of skipping', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'eggmesh-no-java-'));
    try {
      // An empty cache forces a fetch; PATH has the shell tools the script uses, but no java, no mvn.
      const bin = join(cache, 'bin');
      mkdirSync(bin);
      for (const tool of [
        'dirname',
        'sha256sum',
        'cut',
        'cat',
        'sed',
        'mkdir',
        'mktemp',
        'rm',
        'mv',
        'flock',
      ]) {
        symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
      }
      const env = { PATH: bin, XDG_CACHE_HOME: join(cache, 'cache'), HOME: cache };
      const noJava = await run(env);
      expect(noJava.code).not.toBe(0);
      expect(noJava.stderr).toMatch(/needs Java 17 or newer .*apt-get install openjdk/);
      symlinkSync('/usr/bin/java', join(bin, 'java'));
      const noMaven = await run(env);
      expect(noMaven.code).not.toBe(0);
      expect(noMaven.stderr).toMatch(/needs Maven .*apt-get install maven/);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('stops when the process that started it dies without stopping it', async () => {
    // A parent that starts a server and exits at once (as a killed test run would).
    const script = `const { start } = await import(${JSON.stringify(serverModule)}); const s = await start(); console.log(s.pid); process.exit(0);`;
    const pid = Number(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim(),
    );
    expect(pid).toBeGreaterThan(0);
    try {
      while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(isAlive(pid)).toBe(false);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
