import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatLogLine, Supervisor } from '../src/supervisor.js';

const dir = mkdtempSync(join(tmpdir(), 'eggmesh-supervisor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const script = (name: string, body: string) => {
  const file = join(dir, name);
  writeFileSync(file, body);
  return file;
};

const waitFor = async (check: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('supervisor', () => {
  it('prefixes each line and formats pino JSON lines', async () => {
    const lines: string[] = [];
    const supervisor = new Supervisor({
      services: [
        {
          name: 'talker',
          script: script(
            'talker.mjs',
            `console.log(JSON.stringify({level:30,time:0,msg:'hello',port:1}));console.error('plain');setInterval(()=>{},1000);`,
          ),
        },
      ],
      env: process.env,
      write: (l) => lines.push(l),
      shutdownTimeoutMs: 2000,
    });
    supervisor.start();
    await waitFor(() => lines.length >= 2);
    await supervisor.stop();
    expect(lines).toContain('[talker] 00:00:00 INFO  hello port=1');
    expect(lines).toContain('[talker] plain');
  });

  it('restarts a crashing service with growing delays', async () => {
    const lines: string[] = [];
    const supervisor = new Supervisor({
      services: [{ name: 'crasher', script: script('crash.mjs', 'process.exit(3);') }],
      env: process.env,
      write: (l) => lines.push(l),
      shutdownTimeoutMs: 2000,
      backoffMs: 20,
    });
    supervisor.start();
    await waitFor(() => lines.filter((l) => l.includes('restarting')).length >= 3);
    await supervisor.stop();
    const delays = lines
      .filter((l) => l.includes('restarting'))
      .map((l) => Number(/in (\d+) ms/.exec(l)?.[1]));
    expect(delays.slice(0, 3)).toEqual([20, 40, 80]);
    expect(lines[0]).toMatch(/exited \(code 3\)/);
  });

  it('stops with SIGTERM and kills a service that ignores it', async () => {
    const lines: string[] = [];
    const supervisor = new Supervisor({
      services: [
        {
          name: 'polite',
          script: script(
            'polite.mjs',
            `process.on('SIGTERM',()=>{console.log('bye');process.exit(0)});setInterval(()=>{},1000);console.log('up');`,
          ),
        },
        {
          name: 'stubborn',
          script: script(
            'stubborn.mjs',
            `process.on('SIGTERM',()=>{});setInterval(()=>{},1000);console.log('up');`,
          ),
        },
      ],
      env: process.env,
      write: (l) => lines.push(l),
      shutdownTimeoutMs: 300,
    });
    supervisor.start();
    await waitFor(() => lines.filter((l) => l.endsWith(' up')).length === 2);
    const pids = supervisor.pids();
    await supervisor.stop();
    expect(lines.some((l) => l.includes('[polite  ] bye'))).toBe(true);
    for (const pid of Object.values(pids)) expect(() => process.kill(pid!, 0)).toThrow();
    expect(lines.some((l) => l.includes('restarting'))).toBe(false);
  });

  it('leaves lines that are not JSON alone', () => {
    expect(formatLogLine('{not json')).toBe('{not json');
    expect(formatLogLine('{"level":50,"time":86400000,"msg":"boom","err":{"message":"x"}}')).toBe(
      '00:00:00 ERROR boom err={"message":"x"}',
    );
  });
});
