import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProjectionFeed } from '../src/subscriptions/feed.js';
import { SLOW_SUBSCRIBER_CLOSE, subscribe } from '../src/subscriptions/subscriber.js';
import { type Fixture, fixture, uuid } from './helpers.js';

/** A socket that holds `bufferedAmount` unsent bytes and records how it was closed. */
class HeldSocket {
  closed: { code: number; reason: string } | undefined;
  constructor(public bufferedAmount: number) {}
  close(code: number, reason: string): void {
    this.closed = { code, reason };
  }
}

describe('a slow subscriber', () => {
  let f: Fixture;
  let feed: ProjectionFeed;
  beforeEach(async () => {
    f = await fixture();
    feed = new ProjectionFeed(f.store, { pollMs: 50, maxSpan: 1000 }, (error) => {
      throw error;
    });
  });
  afterEach(async () => {
    await feed.close();
    await f.close();
  });

  const farm = uuid(1, 1);
  const doc = (total_hens: number) => ({
    entity: 'farm_output' as const,
    id: farm,
    payload: { farm_id: farm, farm_type: 'homestead', total_hens },
  });

  it('is dropped once its unsent bytes pass the bound, instead of being buffered further', async () => {
    const socket = new HeldSocket(0);
    let ended = 0;
    const changes = subscribe({
      feed,
      socket,
      bufferBytes: 4096,
      wants: () => true,
      after: 0,
      onEnd: () => {
        ended += 1;
      },
    });
    await f.project([doc(1)], 1);
    expect((await changes.next()).value?.payload.total_hens).toBe(1);
    // The client stops reading: its socket holds nearly the bound, and the changes keep coming.
    socket.bufferedAmount = 4000;
    for (let n = 2; n < 10 && !socket.closed; n++) {
      await f.project([doc(n)], n);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(socket.closed).toEqual({
      code: SLOW_SUBSCRIBER_CLOSE,
      reason: 'subscriber too slow: it was dropped',
    });
    expect(ended).toBe(1);
    expect(feed.subscribers).toBe(0);
    expect((await changes.next()).done).toBe(true);
  });

  it('that keeps up gets every change, in commit order', async () => {
    const socket = new HeldSocket(0);
    const changes = subscribe({
      feed,
      socket,
      bufferBytes: 4096,
      wants: () => true,
      after: 0,
      onEnd: () => {},
    });
    for (let n = 1; n <= 5; n++) await f.project([doc(n)], n);
    const got: number[] = [];
    for (let n = 1; n <= 5; n++) got.push((await changes.next()).value?.position as number);
    expect(got).toEqual([1, 2, 3, 4, 5]);
    expect(socket.closed).toBeUndefined();
    await changes.return?.();
    expect(feed.subscribers).toBe(0);
  });
});
