import type { ProjectionChange, ReadStore } from '@eggmesh/store';

/** What the feed reads: the projection position, its change feed and the wake-up on a commit. */
export type FeedStore = Pick<ReadStore, 'projectionPosition' | 'projectionChanges' | 'changed'>;

export interface FeedOptions {
  /** Longest wait between two looks at the projection position when no change woke the feed. */
  readonly pollMs: number;
  /** Most log positions one read of the change feed covers (bounds one read's size). */
  readonly maxSpan: number;
}

/** One subscriber's end of the feed: the feed offers it every change past its start, in commit order. */
export interface FeedSink {
  /** Whether this subscriber wants the change (its key or zone). */
  wants(change: ProjectionChange): boolean | Promise<boolean>;
  /** A wanted change, in commit order. */
  deliver(change: ProjectionChange): void;
}

/**
 * The live end of the projections in one read-api process: one loop reads what the projector committed
 * since the last position it saw (the store's change feed) and offers it to every subscriber, so N
 * subscribers cost one read per commit. Each read-api replica runs its own: the projector never talks
 * to the read side. The loop runs only while someone subscribes.
 */
export class ProjectionFeed {
  private readonly sinks = new Set<FeedSink>();
  /** The position every change up to which was offered to the sinks present then. */
  private position: number | undefined;
  private loop: Promise<void> | undefined;
  private starting: Promise<number> | undefined;
  private readonly abort = new AbortController();
  private closed = false;

  constructor(
    private readonly store: FeedStore,
    private readonly options: FeedOptions,
    private readonly onError: (error: unknown) => void,
  ) {}

  get subscribers(): number {
    return this.sinks.size;
  }

  /**
   * Adds a sink: it gets every change committed after the returned position (changes at or below it
   * are the caller's to replay with `replay`). Starts the loop when it is the first.
   */
  async join(sink: FeedSink): Promise<number> {
    if (this.closed) throw new Error('the projection feed is closed');
    if (this.position === undefined) {
      this.starting ??= this.store.projectionPosition();
      const start = await this.starting;
      this.position ??= start;
    }
    // No await between reading the position and joining: the loop moves it only after an await.
    this.sinks.add(sink);
    this.loop ??= this.run();
    return this.position;
  }

  leave(sink: FeedSink): void {
    this.sinks.delete(sink);
  }

  /** The changes committed in (`after`, `through`], read in spans of at most `maxSpan` positions. */
  async *replay(after: number, through: number): AsyncGenerator<ProjectionChange> {
    for (let from = after; from < through; from = Math.min(through, from + this.options.maxSpan)) {
      const to = Math.min(through, from + this.options.maxSpan);
      yield* await this.store.projectionChanges(from, to);
    }
  }

  private async run(): Promise<void> {
    try {
      while (!this.closed && this.sinks.size > 0) {
        try {
          const head = await this.store.projectionPosition();
          const from = this.position ?? head;
          if (head > from) {
            const through = Math.min(head, from + this.options.maxSpan);
            const changes = await this.store.projectionChanges(from, through);
            // Together, with no await between: a sink joining from here on starts after `through`.
            const sinks = [...this.sinks];
            this.position = through;
            for (const change of changes) {
              for (const sink of sinks) if (await sink.wants(change)) sink.deliver(change);
            }
            continue;
          }
          await this.store.changed(this.options.pollMs, this.abort.signal);
        } catch (error) {
          if (this.closed) return;
          this.onError(error);
          await new Promise((resolve) => setTimeout(resolve, this.options.pollMs));
        }
      }
    } finally {
      this.loop = undefined;
      // Nobody listens: the next subscriber starts from the position of its time, not from this one.
      if (this.sinks.size === 0) {
        this.position = undefined;
        this.starting = undefined;
      }
      // A sink that joined as the loop was ending needs it again.
      if (!this.closed && this.sinks.size > 0) this.loop = this.run();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    this.sinks.clear();
    await this.loop;
  }
}
