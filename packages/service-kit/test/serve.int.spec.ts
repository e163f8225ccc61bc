import { type ChildProcess, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// Real processes: the fixture is a tiny service built on serve() from packages/service-kit/dist (run
// `pnpm build` first), so what it shows holds for every service that listens through serve().
const fixture = fileURLToPath(new URL('./fixtures/server.mjs', import.meta.url));
const children: ChildProcess[] = [];

interface Started {
  child: ChildProcess;
  port: number;
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function start(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [fixture], {
    env: { ...process.env, EGGMESH_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  createInterface({ input: child.stderr! }).on('line', (line) => lines.push(line));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', () => reject(new Error(`fixture exited early:\n${lines.join('\n')}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const parsed = JSON.parse(line) as { port?: number };
      if (parsed.port) resolve(parsed.port);
    });
  });
  return { child, port, lines, exited };
}

afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** A raw TCP client (from `localAddress`, a loopback address): what it received, whether it was closed. */
function rawClient(port: number, localAddress = '127.0.0.1') {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  const state = { received: '', closed: false };
  socket.on('data', (chunk) => {
    state.received += chunk.toString('latin1');
  });
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      state.closed = true;
      resolve();
    }),
  );
  socket.on('error', () => undefined);
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, state, closed, connected };
}

const get = (socket: Socket, path: string) =>
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`);

async function waitUntil(check: () => boolean, what: string, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('serve(): limits every service gets', () => {
  it('answers 408 and closes a client that trickles its body, while it is still trickling', async () => {
    const { port } = await start({
      EGGMESH_HTTP_HEADERS_TIMEOUT_MS: '300',
      EGGMESH_HTTP_REQUEST_TIMEOUT_MS: '600',
    });
    const client = rawClient(port);
    await client.connected;
    client.socket.write(
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n"',
    );
    let sent = 1;
    const trickle = setInterval(() => {
      if (!client.state.closed && sent < 9_999) {
        client.socket.write('a');
        sent += 1;
      }
    }, 50);
    await client.closed;
    clearInterval(trickle);
    expect(sent).toBeLessThan(9_999);
    expect(client.state.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('lets a client finish uploading a body it refused (413), so the client reads the 413', async () => {
    const { port } = await start({ EGGMESH_BODY_LIMIT_BYTES: '1024' });
    const body = Buffer.alloc(4 * 1024 * 1024, 32);
    const outcomes: Array<number | 'reset'> = [];
    // Closing with the upload unread made the kernel reset the socket: the client often saw no answer.
    for (let i = 0; i < 20; i++) {
      outcomes.push(
        await new Promise((resolve) => {
          const req = httpRequest(`http://127.0.0.1:${port}/echo`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': body.length },
            agent: false,
          });
          let answered = false;
          req.on('response', (res) => {
            answered = true;
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', () => {
            if (!answered) resolve('reset');
          });
          req.end(body);
        }),
      );
    }
    expect(outcomes).toEqual(Array(20).fill(413));
  });

  it('closes a client that trickles its headers', async () => {
    const { port } = await start({
      EGGMESH_HTTP_HEADERS_TIMEOUT_MS: '300',
      EGGMESH_HTTP_REQUEST_TIMEOUT_MS: '600',
    });
    const client = rawClient(port);
    await client.connected;
    const header = `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'a'.repeat(5000)}\r\n\r\n`;
    let sent = 0;
    const trickle = setInterval(() => {
      if (!client.state.closed && sent < header.length) client.socket.write(header[sent++]!);
    }, 20);
    await client.closed;
    clearInterval(trickle);
    expect(sent).toBeLessThan(header.length);
    expect(client.state.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const { port } = await start({ EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS: '200' });
    const client = rawClient(port);
    await client.connected;
    get(client.socket, '/health');
    await client.closed;
    expect(client.state.received).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('refuses connections beyond the cap and keeps answering the others', async () => {
    const { port } = await start({ EGGMESH_HTTP_MAX_CONNECTIONS: '3' });
    const open = [rawClient(port), rawClient(port), rawClient(port)];
    for (const client of open) {
      await client.connected;
      get(client.socket, '/health');
    }
    await waitUntil(() => open.every((c) => c.state.received.includes('"status":"ok"')), 'three answers');
    const extra = rawClient(port);
    await extra.closed;
    expect(extra.state.received).toBe('');
    for (const client of open) {
      client.state.received = '';
      get(client.socket, '/health');
    }
    await waitUntil(() => open.every((c) => c.state.received.includes('"status":"ok"')), 'answers again');
    expect(open.every((c) => !c.state.closed)).toBe(true);
    for (const client of open) client.socket.destroy();
  });

  it('one client address holding idle connections does not lock the other clients out', async () => {
    // 64 connections per process, so 4 per client address; 127.0.0.9 plays the trusted front door.
    const { port } = await start({
      EGGMESH_HTTP_MAX_CONNECTIONS: '64',
      EGGMESH_TRUSTED_PROXIES: '127.0.0.9',
    });
    const hog = Array.from({ length: 64 }, () => rawClient(port, '127.0.0.2'));
    await Promise.all(hog.map((client) => client.connected));
    await waitUntil(() => hog.filter((c) => c.state.closed).length === 60, 'the hog closed past its cap');
    const kept = hog.filter((c) => !c.state.closed);
    expect(kept).toHaveLength(4);
    // Its kept connections are served as usual.
    get(kept[0]!.socket, '/health');
    await waitUntil(() => kept[0]!.state.received.includes('"status":"ok"'), 'the hog answered');
    // Another client is served while the hog holds its idle sockets.
    const other = rawClient(port, '127.0.0.3');
    await other.connected;
    get(other.socket, '/health');
    await waitUntil(() => other.state.received.includes('"status":"ok"'), 'the other client answered');
    // The trusted proxy pools more connections than one client may hold.
    const proxy = Array.from({ length: 10 }, () => rawClient(port, '127.0.0.9'));
    for (const client of proxy) {
      await client.connected;
      get(client.socket, '/health');
    }
    await waitUntil(
      () => proxy.every((c) => c.state.received.includes('"status":"ok"')),
      'every pooled proxy connection answered',
    );
    expect(proxy.every((c) => !c.state.closed)).toBe(true);
    for (const client of [...hog, other, ...proxy]) client.socket.destroy();
  });

  it('reports its name, pid and uptime on /health', async () => {
    const { port } = await start({});
    const body = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'ok', service: 'fixture', pid: expect.any(Number) });
    expect(body.uptimeS).toEqual(expect.any(Number));
  });
});

describe('overload (@fastify/under-pressure)', () => {
  it('sheds requests with 503 EGGMESH_OVERLOADED and retry-after while its loop stays late, and answers /health', async () => {
    const { port } = await start({});
    const base = `http://127.0.0.1:${port}`;
    const quick = await fetch(`${base}/busy?ms=1`);
    await quick.arrayBuffer();
    expect(quick.status).toBe(200);
    // Three clients keep the loop busy with 3 s requests back to back: every turn of it is seconds late.
    let loading = true;
    const load = async () => {
      while (loading) {
        await fetch(`${base}/busy?ms=3000`)
          .then((r) => r.arrayBuffer())
          .catch(() => undefined);
      }
    };
    const loaders = [load(), load(), load()];
    try {
      let shed: Response | undefined;
      const deadline = Date.now() + 40_000;
      while (shed === undefined && Date.now() < deadline) {
        const res = await fetch(`${base}/busy?ms=1`);
        if (res.status === 503) shed = res;
        else await res.arrayBuffer();
      }
      expect(shed?.headers.get('retry-after')).toBe('2');
      expect(await shed?.json()).toEqual({
        code: 'EGGMESH_OVERLOADED',
        error: 'the service is overloaded; retry after 2 s',
      });
      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });
    } finally {
      loading = false;
      await Promise.all(loaders);
    }
  }, 60_000);

  it('does not keep a process alive that has nothing left to do', async () => {
    const service = await start({ FIXTURE_CLOSE_AFTER_LISTEN: '1' });
    expect(await service.exited).toEqual({ code: 0, signal: null });
  });
});

/** Runs the fixture to its end; for the ways it must refuse to start. */
async function run(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [fixture], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stdout, stderr };
}

describe('refusing to start', () => {
  it('lists every configuration problem and exits 2, without a stack trace', async () => {
    const result = await run({ EGGMESH_HTTP_REQUEST_TIMEOUT_MS: 'soon', WRITE_API_PORT: '-1' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/invalid configuration/);
    expect(result.stderr).toMatch(/EGGMESH_HTTP_REQUEST_TIMEOUT_MS/);
    expect(result.stderr).toMatch(/WRITE_API_PORT/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('waits for a port held by an outgoing connection (not a listener), then listens on it', async () => {
    // An outgoing connection's local (ephemeral) port: the port the service is told to use.
    const accepted: Socket[] = [];
    const peer = createServer((socket) => {
      socket.on('error', () => undefined);
      accepted.push(socket);
    });
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    const peerAddress = peer.address();
    const peerPort = typeof peerAddress === 'object' && peerAddress ? peerAddress.port : 0;
    const holder: Socket = connect({ port: peerPort, host: '127.0.0.1' });
    holder.on('error', () => undefined);
    await new Promise<void>((resolve) => holder.once('connect', resolve));
    const held = holder.localPort as number;
    try {
      const starting = start({ FIXTURE_PORT: String(held) });
      // It says it waits, and does not give up as for a port another server listens on.
      const lines: string[] = [];
      const child = children.at(-1)!;
      child.stdout!.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
      while (!lines.join('').includes('held by a connection')) {
        expect(child.exitCode).toBeNull();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const started = await starting;
      // The connection ends (its peer closes first, so the held port keeps no TIME_WAIT).
      for (const socket of accepted) socket.destroy();
      holder.destroy();
      // Once the connection is gone it listens on that port (a process that gave up would exit).
      let status = 0;
      while (status !== 200) {
        expect(child.exitCode, [...lines, ...started.lines].join('\n')).toBeNull();
        status = await fetch(`http://127.0.0.1:${held}/health`).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      holder.destroy();
      peer.close();
    }
  });

  it('names the busy port and exits 98 when its port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const result = await run({ FIXTURE_PORT: String(port) });
      expect(result.code).toBe(98);
      const fatal = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.level === 60);
      expect(fatal?.msg).toContain(`port ${port} on 127.0.0.1 is in use`);
    } finally {
      taken.close();
    }
  });
});
