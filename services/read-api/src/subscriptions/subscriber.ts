import type { ProjectionChange } from '@eggmesh/store';
import type { FeedSink, ProjectionFeed } from './feed.js';

/** The socket a subscription is sent on: how much it holds unsent, and how to drop it. */
export interface SubscriberSocket {
  readonly bufferedAmount: number;
  close(code: number, reason: string): void;
}

/** The close code of a subscriber dropped for reading slower than the projections change. */
export const SLOW_SUBSCRIBER_CLOSE = 4408;

export interface SubscriberOptions {
  readonly feed: ProjectionFeed;
  readonly socket: SubscriberSocket;
  /** Unsent bytes (socket buffer + this subscriber's queue) past which the connection is dropped. */
  readonly bufferBytes: number;
  /** Which changes this subscriber wants. */
  readonly wants: FeedSink['wants'];
  /** Replays from this position (exclusive) before the live changes; none: live changes only. */
  readonly after?: number | undefined;
  /**
   * What to send first when there is no `after` (the current document of a keyed subscription): it
   * reflects at least `position`, and live changes at or below `position` are then skipped.
   */
  readonly initial?: () => Promise<{ readonly position: number; readonly change: ProjectionChange | null }>;
  /** Called once when the subscription ends, however it ends. */
  readonly onEnd: () => void;
}

const sizes = new WeakMap<ProjectionChange, number>();
/** Roughly what a change weighs on the wire (its document's JSON), computed once per change. */
function sizeOf(change: ProjectionChange): number {
  let size = sizes.get(change);
  if (size === undefined) {
    size = JSON.stringify(change.payload).length + 64;
    sizes.set(change, size);
  }
  return size;
}

async function* wanted(
  changes: AsyncIterable<ProjectionChange>,
  wants: FeedSink['wants'],
): AsyncGenerator<ProjectionChange> {
  for await (const change of changes) if (await wants(change)) yield change;
}

/**
 * One subscription as the async iterator GraphQL's `subscribe` consumes: the replay from `after` (or
 * the current document), then the live changes the feed offers, in commit order, each once. A
 * subscriber whose queue and socket buffer together pass the bound is dropped, never buffered further.
 */
export function subscribe(options: SubscriberOptions): AsyncIterableIterator<ProjectionChange> {
  const { feed, socket, bufferBytes } = options;
  const live: ProjectionChange[] = [];
  let queued = 0;
  let waiting: ((result: IteratorResult<ProjectionChange>) => void) | undefined;
  let ended = false;
  /** Joining the feed and setting up the backlog, once. */
  let started: Promise<void> | undefined;
  let backlog: AsyncIterator<ProjectionChange> | undefined;
  /** Live changes at or below this position are older than the initial document: skipped. */
  let skipThrough = -1;

  const end = (): IteratorResult<ProjectionChange> => {
    if (!ended) {
      ended = true;
      feed.leave(sink);
      live.length = 0;
      options.onEnd();
    }
    const done = { done: true, value: undefined } as const;
    waiting?.(done);
    waiting = undefined;
    return done;
  };

  const sink: FeedSink = {
    wants: options.wants,
    deliver(change) {
      if (ended) return;
      if (change.position <= skipThrough) return;
      if (waiting) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ done: false, value: change });
        return;
      }
      queued += sizeOf(change);
      if (queued + socket.bufferedAmount > bufferBytes) {
        end();
        socket.close(SLOW_SUBSCRIBER_CLOSE, 'subscriber too slow: it was dropped');
        return;
      }
      live.push(change);
    },
  };

  const start = async (): Promise<void> => {
    const position = await feed.join(sink);
    if (options.after !== undefined) {
      if (options.after < position) backlog = wanted(feed.replay(options.after, position), options.wants);
      return;
    }
    if (!options.initial) return;
    const { position: current, change } = await options.initial();
    skipThrough = current;
    if (change)
      backlog = (async function* () {
        yield change;
      })();
  };

  const iterator: AsyncIterableIterator<ProjectionChange> = {
    async next() {
      if (ended) return { done: true, value: undefined };
      started ??= start();
      await started;
      if (backlog) {
        const next = await backlog.next();
        if (!next.done) return next;
        backlog = undefined;
      }
      if (ended) return { done: true, value: undefined };
      for (let change = live.shift(); change; change = live.shift()) {
        queued -= sizeOf(change);
        if (change.position > skipThrough) return { done: false, value: change };
      }
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    async return() {
      return end();
    },
    async throw(error?: unknown) {
      end();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
