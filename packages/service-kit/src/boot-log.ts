/** One JSON line in the shape of the services' pino logs, for before (or beside) a service's logger. */
export function bootLog(
  service: string,
  level: number,
  msg: string,
  extra: Record<string, unknown> = {},
): void {
  process.stdout.write(`${JSON.stringify({ level, time: Date.now(), service, msg, ...extra })}\n`);
}

/**
 * The `onError`/`onOpen` pair for a store that keeps connecting in the background: says what is wrong
 * on the first failure and whenever the reason changes (then every 30th attempt), and when it connects.
 */
export function connectLog(service: string, what: string) {
  let told = '';
  return {
    onError(error: unknown, attempt: number): void {
      const reason = error instanceof Error ? error.message : String(error);
      if (reason !== told || attempt % 30 === 0) {
        bootLog(service, 40, `${what} cannot be used yet; retrying every second`, { attempt, reason });
      }
      told = reason;
    },
    onOpen(attempts: number): void {
      if (attempts > 1) bootLog(service, 30, `${what} connected`, { attempts });
    },
  };
}
