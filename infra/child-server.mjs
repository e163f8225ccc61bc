// What every server launcher under infra/ shares (the MongoDB-wire servers, Kafka, PostgreSQL, Kafka
// Connect): prepare its files with a script, run it as a child process, wait for the line that says it
// is ready, stop it gracefully or kill it, and run it from the command line for the dev stack.
// Types: child-server.d.mts.
import { execFile, spawn } from 'node:child_process';

/**
 * Runs `bash <script>` (a fetch or build step that caches its result) and answers the last line it
 * printed (the directory or file it prepared); fails with `cannot <what>: <its stderr>`.
 * @param {string} script
 * @param {string} what
 * @param {number} timeoutMs
 * @returns {Promise<string>}
 */
export function prepare(script, what, timeoutMs) {
  return new Promise((resolve, reject) => {
    execFile('bash', [script], { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`eggmesh: cannot ${what}: ${stderr.trim().slice(-2000) || error.message}`));
        return;
      }
      resolve(stdout.trim().split('\n').pop() ?? '');
    });
  });
}

/**
 * Spawns `command args` and waits until `ready` matches what it printed on stdout or on stderr (each
 * read on its own, so a half line of one never splits a line of the other), or until `probe` (asked
 * every half second) answers true. Answers the match, the child, and how to stop it; rejects with the
 * output's tail when the server exits first, cannot run, or is not ready within `timeoutMs` (then
 * `abort` runs: by default the server is killed).
 * @param {import('./child-server.d.mts').ChildOptions} options
 */
export async function startChild(options) {
  const { name, command, args, ready, probe, timeoutMs, stopTimeoutMs = 10_000 } = options;
  const started = performance.now();
  const child = spawn(command, args, {
    stdio: [options.stdin ?? 'pipe', 'pipe', 'pipe'],
    env: options.env,
    uid: options.uid,
    gid: options.gid,
  });
  let tail = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const match = await new Promise((resolve, reject) => {
    let settled = false;
    const settle = (fn, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn(value);
    };
    const timer = setTimeout(() => {
      (options.abort ?? ((server) => server.kill('SIGKILL')))(child);
      settle(reject, new Error(`eggmesh: ${name} did not start within ${timeoutMs / 1000} s\n${tail}`));
    }, timeoutMs);
    for (const stream of [child.stdout, child.stderr]) {
      let seen = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        // The tails only: some servers log a stack trace per rejected request.
        tail = (tail + chunk).slice(-16_384);
        options.onLog?.(chunk);
        if (!ready || settled) return;
        seen = (seen + chunk).slice(-8192);
        const found = ready.exec(seen);
        if (found) settle(resolve, found);
      });
    }
    child.once('error', (error) =>
      settle(reject, new Error(`eggmesh: cannot run ${name}: ${error.message}`)),
    );
    exited.then(({ code, signal }) =>
      settle(reject, new Error(`eggmesh: ${name} exited (${signal ?? code}) before it was ready\n${tail}`)),
    );
    if (probe) {
      void (async () => {
        while (!settled) {
          if (await probe().catch(() => false)) settle(resolve, null);
          else await new Promise((wake) => setTimeout(wake, 500));
        }
      })();
    }
  });
  const startMs = performance.now() - started;

  /** Sends `signal`, waits for the exit, and kills the server if it has not gone in `stopTimeoutMs`. */
  const stopWith = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    }
  };
  return { child, match, startMs, exited, stopWith, output: () => tail };
}

/**
 * `node infra/<server>/server.mjs`: prints where the started server is, stops it on Ctrl-C or SIGTERM,
 * and exits 0 on such a stop, 1 when the server died on its own.
 * @param {{ stop(): Promise<void>, exited: Promise<{ code: number | null, signal: string | null }> }} server
 * @param {string} line
 */
export async function serveFromCommandLine(server, line) {
  process.stdout.write(`${line}\n`);
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void server.stop());
  const { code, signal } = await server.exited;
  process.exitCode = code === 0 || signal === 'SIGTERM' || code === 143 ? 0 : 1;
}
