import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatLogLine, Supervisor } from '../src/supervisor.js';
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

/** A started supervisor of one service it probes on /health every 100 ms, and the lines it wrote. */
const probed = (name: string, file: string, port: number) => {
  const lines: string[] = [];
  const supervisor = new Supervisor({
    services: [{ name, script: file, healthUrl: `http://127.0.0.1:${port}/health` }],
    env: process.env,
    write: (l) => lines.push(l),
    shutdownTimeoutMs: 500,
    backoffMs: 20,
    healthProbe: { intervalMs: 100, timeoutMs: 100, failures: 3 },
  });
  supervisor.start();
  return { lines, supervisor };
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

  it('kills and restarts a service that stops answering /health', async () => {
    const port = await freePort();
    // Answers /health, then (a moment after its first answer) blocks its event loop for good.
    const hang = script(
      'hang.mjs',
      `import http from 'node:http';
let answered = false;
http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ status: 'ok', pid: process.pid }));
  if (!answered) { answered = true; console.log('answered'); setTimeout(() => { for (;;) {} }, 200); }
}).listen(${port}, '127.0.0.1');`,
    );
    const { lines, supervisor } = probed('hang', hang, port);
    let first: number | undefined;
    try {
      await waitFor(() => lines.filter((l) => l.endsWith(' answered')).length >= 1);
      first = supervisor.pids().hang;
      await waitFor(() => lines.filter((l) => l.endsWith(' answered')).length >= 2, 20_000);
    } finally {
      await supervisor.stop();
    }
    expect(supervisor.pids().hang).toBeUndefined();
    const notice = lines.find((l) => l.includes('not answering'));
    expect(notice).toContain(`[hang] not answering http://127.0.0.1:${port}/health (3 probes in a row)`);
    expect(notice).toContain(`killing pid ${first}`);
    expect(lines.some((l) => /exited \(SIGKILL\); restarting/.test(l))).toBe(true);
  });

  it('probes /health over one kept-alive connection, and over a new one once the service closed it', async () => {
    const port = await freePort();
    // Prints, on each probe, how many connections it has accepted so far; closes its idle
    // connections after 150 ms (as a short keep-alive timeout would) from the fourth probe on.
    const counted = script(
      'counted.mjs',
      `import http from 'node:http';
let connections = 0;
let requests = 0;
const server = http.createServer((req, res) => {
  requests += 1;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ status: 'ok', pid: process.pid }));
  console.log('probe ' + requests + ' on connection ' + connections);
  if (requests === 4) server.keepAliveTimeout = 150;
});
server.keepAliveTimeout = 60_000;
server.on('connection', () => { connections += 1; });
server.listen(${port}, '127.0.0.1');`,
    );
    const { lines, supervisor } = probed('counted', counted, port);
    const probes = () =>
      lines.flatMap((l) => {
        const m = / probe (\d+) on connection (\d+)$/.exec(l);
        return m ? [[Number(m[1]), Number(m[2])] as const] : [];
      });
    try {
      await waitFor(() => probes().length >= 8, 20_000);
    } finally {
      await supervisor.stop();
    }
    const seen = probes();
    // Probes 1–4 share the first connection.
    expect(seen.slice(0, 4).map(([, c]) => c)).toEqual([1, 1, 1, 1]);
    // After that the service drops idle connections; every probe still gets its answer, and the
    // service was never taken for dead.
    expect(seen.at(-1)![1]).toBeGreaterThan(1);
    expect(lines.some((l) => l.includes('not answering'))).toBe(false);
    expect(lines.some((l) => /exited/.test(l) && !/SIGTERM|code 0/.test(l))).toBe(false);
  });

  it('does not restart a service that cannot start (bad configuration, port in use) and says why', async () => {
    const lines: string[] = [];
    const gaveUp: string[] = [];
    const supervisor = new Supervisor({
      services: [
        {
          name: 'busy',
          script: script('busy.mjs', 'process.exit(98);'),
          healthUrl: 'http://127.0.0.1:4321/health',
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

  it('leaves lines that are not JSON alone', () => {
    expect(formatLogLine('{not json')).toBe('{not json');
    expect(formatLogLine('{"level":50,"time":86400000,"msg":"boom","err":{"message":"x"}}')).toBe(
      '00:00:00 ERROR boom err={"message":"x"}',
    );
  });
});
