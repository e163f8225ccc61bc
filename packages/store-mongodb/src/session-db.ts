import type { AbstractCursor, ClientSession, ClusterTime, Db, MongoClient, Timestamp } from 'mongodb';

/** The collection reads the adapter's readers issue, with the index of their options argument. */
const READS: Readonly<Record<string, number>> = { find: 1, findOne: 1, aggregate: 1, countDocuments: 1 };
/** Of those, the ones that answer a cursor (their session lives until the cursor closes). */
const CURSORS = new Set(['find', 'aggregate']);

/**
 * The causal time of one request's view on one deployment. Each read of the view runs in a session
 * of its own, since a session serves one operation at a time (the drivers' sessions specification)
 * and a GraphQL request reads in parallel: the session starts at the clock's cluster and operation
 * time, so the member that serves it has applied everything the view's earlier reads reflected, and
 * moves the clock on when it ends.
 */
export class CausalClock {
  private clusterTime: ClusterTime | undefined;
  private operationTime: Timestamp | undefined;
  private readonly open = new Set<ClientSession>();

  constructor(private readonly client: MongoClient) {}

  /** Moves the clock forward to these times (never back). */
  advance(clusterTime: ClusterTime | undefined, operationTime: Timestamp | undefined): void {
    if (
      clusterTime &&
      (!this.clusterTime || clusterTime.clusterTime.greaterThan(this.clusterTime.clusterTime))
    ) {
      this.clusterTime = clusterTime;
    }
    if (operationTime && (!this.operationTime || operationTime.greaterThan(this.operationTime))) {
      this.operationTime = operationTime;
    }
  }

  /** A causally consistent session for one read, starting at the clock's time. */
  start(): ClientSession {
    const session = this.client.startSession({ causalConsistency: true });
    if (this.clusterTime) session.advanceClusterTime(this.clusterTime);
    if (this.operationTime) session.advanceOperationTime(this.operationTime);
    this.open.add(session);
    return session;
  }

  /** Takes the times the read's session reached and ends it. */
  async finish(session: ClientSession): Promise<void> {
    if (!this.open.delete(session)) return;
    this.advance(session.clusterTime, session.operationTime);
    await session.endSession();
  }

  /** Ends the sessions of reads still open (a cursor never read to its end). */
  async end(): Promise<void> {
    await Promise.all([...this.open].map((session) => this.finish(session)));
  }

  /** How many reads are in flight (tests: none are left once their answers are in). */
  get reading(): number {
    return this.open.size;
  }
}

/**
 * `db` with every collection read (`find`, `findOne`, `aggregate`, `countDocuments`) sent in a
 * session of `clock`'s, so the readers written against a `Db` read causally consistently unchanged.
 * Writes (a projection read finishing a pending batch) go as before, outside any session.
 */
export function sessionDb(db: Db, clock: CausalClock): Db {
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key !== 'collection') return Reflect.get(target, key, receiver);
      return (name: string) =>
        new Proxy(target.collection(name), {
          get(collection, method, inner) {
            const value: unknown = Reflect.get(collection, method, inner);
            const at = typeof method === 'string' ? READS[method] : undefined;
            if (at === undefined || typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              const session = clock.start();
              const withSession = [...args];
              withSession[at] = { ...((args[at] ?? {}) as Record<string, unknown>), session };
              const answer: unknown = value.apply(collection, withSession);
              if (CURSORS.has(method as string)) {
                (answer as AbstractCursor).once('close', () => void clock.finish(session));
                return answer;
              }
              return (answer as Promise<unknown>).finally(() => clock.finish(session));
            };
          },
        });
    },
  });
}
