import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { logFormatter, Supervisor } from '../src/supervisor.js';
import { freePort } from './helpers.js';

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
    const clock = new Date(0).toTimeString().slice(0, 8);
    expect(lines).toContain(`[talker] [${clock}] INFO: hello {"port":1}`);
    expect(lines).toContain('[talker] plain');
  });

  it('starts infra servers first, the services once their port accepts connections, and stops infra last', async () => {
    const port = await freePort();
    const lines: string[] = [];
    const events = join(dir, 'events.log');
    writeFileSync(events, '');
    // The "database" listens only after 300 ms and notes when it is told to stop; the app notes its start.
    const database = script(
      'database.mjs',
      `import { appendFileSync } from 'node:fs'; import { createServer } from 'node:net';
       appendFileSync(${JSON.stringify(events)}, 'db started\\n');
       setTimeout(() => createServer((s) => s.end()).listen(${port}, '127.0.0.1', () => appendFileSync(${JSON.stringify(events)}, 'db listening\\n')), 300);
       process.on('SIGTERM', () => { appendFileSync(${JSON.stringify(events)}, 'db stopping\\n'); process.exit(0); });`,
    );
    const app = script(
      'app.mjs',
      `import { appendFileSync } from 'node:fs';
       appendFileSync(${JSON.stringify(events)}, 'app started\\n');
       process.on('SIGTERM', () => { appendFileSync(${JSON.stringify(events)}, 'app stopping\\n'); setTimeout(() => process.exit(0), 200); });
       setInterval(() => {}, 1000);`,
    );
    const supervisor = new Supervisor({
      services: [
        { name: 'app', script: app },
        { name: 'db', script: database, infra: true, port },
      ],
      env: process.env,
      write: (l) => lines.push(l),
      shutdownTimeoutMs: 5000,
    });
    await supervisor.start();
    const read = () => readFileSync(events, 'utf8').trim().split('\n');
    await waitFor(() => read().includes('app started'));
    expect(read().slice(0, 3)).toEqual(['db started', 'db listening', 'app started']);
    await supervisor.stop();
    expect(read().slice(3)).toEqual(['app stopping', 'db stopping']);
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

  it('does not restart a service that cannot start (bad configuration, port in use) and says why', async () => {
    const lines: string[] = [];
    const gaveUp: string[] = [];
    const supervisor = new Supervisor({
      services: [
        {
          name: 'busy',
          script: script('busy.mjs', 'process.exit(98);'),
          port: 4321,
        },
        { name: 'misconfigured', script: script('misconfigured.mjs', 'process.exit(2);') },
      ],
      env: process.env,
      write: (l) => lines.push(l),
      shutdownTimeoutMs: 500,
      backoffMs: 20,
      onGiveUp: (name, reason) => gaveUp.push(`${name}: ${reason}`),
    });
    supervisor.start();
    try {
      await waitFor(() => gaveUp.length === 2);
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await supervisor.stop();
    }
    expect(lines.some((l) => l.includes('restarting in'))).toBe(false);
    expect(gaveUp).toContain('busy: port 4321 is in use by another process');
    expect(gaveUp).toContain('misconfigured: its configuration is invalid');
    expect(lines).toContain(
      '[busy         ] cannot start: port 4321 is in use by another process; not restarting',
    );
  });

  it('formats pino lines with pino-pretty, without the service and pid the prefix gives, and leaves other lines alone', () => {
    const format = logFormatter(false);
    expect(format('{not json')).toBe('{not json');
    expect(format('plain text')).toBe('plain text');
    const line = format(
      '{"level":50,"time":86400000,"pid":7,"hostname":"h","service":"write-api","msg":"boom","port":1}',
    );
    expect(line).toBe(`[${new Date(86_400_000).toTimeString().slice(0, 8)}] ERROR: boom {"port":1}`);
  });
});
