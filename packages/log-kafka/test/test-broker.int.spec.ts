import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isAlive } from '../../../infra/test/process.js';
import { client, freshTopic, kafkaServer } from './helpers.js';

const fetchJars = fileURLToPath(new URL('../../../infra/kafka/fetch-jars.sh', import.meta.url));
const serverModule = fileURLToPath(new URL('../../../infra/kafka/server.mjs', import.meta.url));

function run(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/bin/bash', [fetchJars], { env }, (error, _stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stderr });
    });
  });
}

describe(`the Kafka test broker (${kafkaServer()})`, () => {
  it('creates a one-partition topic through the admin client and reports its offsets', async () => {
    const kafka = client(freshTopic());
    try {
      expect(await kafka.partitions()).toBe(0);
      expect(await kafka.ensureTopic(1)).toBe(1);
      expect(await kafka.ensureTopic(1)).toBe(1);
      expect(await kafka.offsets()).toEqual({ low: 0, high: 0 });
    } finally {
      await kafka.close();
    }
  });

  it('says what to install when java or maven is missing, instead of skipping', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'eggmesh-no-java-'));
    try {
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
      expect(noJava.stderr).toMatch(/Kafka test broker needs Java 17 or newer .*apt-get install openjdk/);
      symlinkSync('/usr/bin/java', join(bin, 'java'));
      const noMaven = await run(env);
      expect(noMaven.code).not.toBe(0);
      expect(noMaven.stderr).toMatch(/needs Maven .*apt-get install maven/);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('stops when the process that started it dies without stopping it', async () => {
    const script = `const { start } = await import(${JSON.stringify(serverModule)}); const s = await start(); console.log(JSON.stringify({ pid: s.pid, dataDir: s.dataDir })); process.exit(0);`;
    const { pid, dataDir } = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim(),
    ) as { pid: number; dataDir: string };
    expect(pid).toBeGreaterThan(0);
    try {
      while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(isAlive(pid)).toBe(false);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      // Its temporary directory: the process that would have removed it is the one that died.
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
