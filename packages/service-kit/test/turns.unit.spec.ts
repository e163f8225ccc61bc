import { describe, expect, it } from 'vitest';
import { LoopTurns } from '../src/turns.js';

/** A request's own work: `ms` of CPU. */
const work = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
};

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 1));
};

describe('LoopTurns', () => {
  it('starts a request at once when nobody waits and the turn has time left', () => {
    const turns = new LoopTurns(2);
    let started = false;
    turns.admit(() => {
      started = true;
    });
    expect(started).toBe(true);
    expect(turns.queued).toBe(0);
  });

  it('once a turn has spent its time, starts the rest in order in the turns that follow', async () => {
    const turns = new LoopTurns(2);
    const started: number[] = [];
    // What a timer sees at each turn of the loop (timers run once per turn, before its I/O).
    const seenByTimers: number[] = [];
    const tick = () => {
      seenByTimers.push(started.length);
      if (started.length < 20) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    for (let i = 0; i < 20; i++)
      turns.admit(() => {
        started.push(i);
        work(1);
      });
    const startedAtOnce = started.length;
    await until(() => started.length === 20 && seenByTimers.at(-1) === 20);
    expect(startedAtOnce).toBeGreaterThan(0);
    expect(startedAtOnce).toBeLessThan(20);
    // The loop turned several times while they started: a few per turn, not all at the first end of turn.
    expect(seenByTimers.filter((n) => n > 0 && n < 20).length).toBeGreaterThanOrEqual(3);
    expect(started).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(turns.queued).toBe(0);
  });

  it('at the end of a turn, lets as many waiting requests go as its time allows, not one', async () => {
    const turns = new LoopTurns(20);
    let started = 0;
    const seenByTimers: number[] = [];
    const tick = () => {
      seenByTimers.push(started);
      if (started < 500) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    for (let i = 0; i < 500; i++)
      turns.admit(() => {
        started++;
        work(0.1);
      });
    await until(() => started === 500);
    // The first timer runs before that turn's end, the second after it: about 20 ms of requests went.
    expect(seenByTimers.length).toBeGreaterThanOrEqual(2);
    expect(seenByTimers[1]! - seenByTimers[0]!).toBeGreaterThanOrEqual(10);
  });

  it('queues a new arrival behind the requests still waiting, even with time left in its turn', async () => {
    const turns = new LoopTurns(2);
    const started: string[] = [];
    for (let i = 0; i < 10; i++)
      turns.admit(() => {
        started.push(`first ${i}`);
        work(1);
      });
    expect(turns.queued).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(turns.queued).toBeGreaterThan(0);
    turns.admit(() => started.push('late'));
    await until(() => started.length === 11);
    expect(started.at(-1)).toBe('late');
  });

  it('with no bound (0), starts everything at once', () => {
    const turns = new LoopTurns(0);
    let count = 0;
    for (let i = 0; i < 10; i++)
      turns.admit(() => {
        count++;
        work(1);
      });
    expect(count).toBe(10);
  });
});
