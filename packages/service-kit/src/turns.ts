import type { FastifyInstance } from 'fastify';

/**
 * Starts requests in bounded turns of the event loop, so that a saturated service still takes new
 * connections.
 *
 * Node 20's libuv accepts one connection per turn of the loop (libuv 1.45 stopped accepting in a loop).
 * Without a bound, a turn starts every request that arrived on the connections already open, so under
 * load a turn lasts as long as all of them together, and a burst of new connections is taken one per
 * such turn: the n-th waits for about n turns. Measured on the read-api with national data (100 new
 * connections, depth-3 queries of 0.7 ms each): the last connection's first answer came after 2.6–3.6 s,
 * and autocannon's 10 s timeout was reached on a colder cache, while no request spent more than 47 ms
 * in the service and the loop never stalled for more than 62 ms.
 *
 * Here a turn starts requests for at most `sliceMs` while it reads sockets (the poll phase) and for at
 * most `sliceMs` more at its end (the check phase); the rest wait, first come first served, for the
 * turns that follow, each of which accepts a connection first. A request that finds nobody waiting and
 * time left in the turn starts at once, so an unloaded service adds no delay. The time counted includes
 * the work each started request does before the loop moves on: Node runs a callback's ticks and
 * microtasks before the next I/O callback and between immediates, so waiting requests are let go one
 * per immediate.
 */
export class LoopTurns {
  private readonly waiting: (() => void)[] = [];
  private head = 0;
  /** When the poll phase of this turn started its first request; -1: none yet (else endOfTurn is due). */
  private turnStart = -1;
  /** Immediates of the current release batch not run yet, and when the batch let its first request go. */
  private planned = 0;
  private batchStart = -1;

  constructor(private readonly sliceMs: number) {}

  /** Calls `go` now, or later in its turn. */
  admit(go: () => void): void {
    if (this.sliceMs > 0 && !this.mayStartNow()) {
      this.waiting.push(go);
      this.planBatch();
      return;
    }
    go();
  }

  /** Requests waiting for a turn (diagnostics and tests). */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  private mayStartNow(): boolean {
    if (this.queued > 0) return false;
    const now = performance.now();
    if (this.turnStart < 0) {
      this.turnStart = now;
      setImmediate(this.endOfTurn);
      return true;
    }
    return now - this.turnStart < this.sliceMs;
  }

  private readonly endOfTurn = (): void => {
    this.turnStart = -1;
  };

  /**
   * One immediate per waiting request, at most 1024 at a time: planned from the poll phase (topped up
   * as requests queue) they run at this turn's end, from the check phase at the next turn's end.
   */
  private planBatch(): void {
    const wanted = Math.min(this.queued, 1024);
    for (; this.planned < wanted; this.planned++) setImmediate(this.releaseOne);
  }

  private readonly releaseOne = (): void => {
    this.planned--;
    const now = performance.now();
    if (this.batchStart < 0) this.batchStart = now;
    const go = this.queued > 0 && now - this.batchStart < this.sliceMs ? this.take() : undefined;
    if (this.planned === 0) {
      this.batchStart = -1;
      if (this.queued > 0) this.planBatch();
    }
    go?.();
  };

  private take(): () => void {
    const go = this.waiting[this.head]!;
    this.waiting[this.head++] = undefined as unknown as () => void;
    if (this.queued === 0) {
      this.waiting.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    return go;
  }
}

/** The process's turns: one event loop, one queue, whatever number of apps it serves. */
let shared: LoopTurns | undefined;

/**
 * Makes every request of `app` wait for its turn (see LoopTurns) before Fastify reads its body. The
 * first app of a process sets the slice; every app of a process is built from the same configuration.
 */
export function startRequestsInTurns(app: FastifyInstance, sliceMs: number): void {
  if (sliceMs <= 0) return;
  shared ??= new LoopTurns(sliceMs);
  const turns = shared;
  app.addHook('onRequest', (_request, _reply, done) => turns.admit(done));
}
