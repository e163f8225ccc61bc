import { randomUUID } from 'node:crypto';
import { StoreError, storeErrorCodes } from '@eggmesh/store';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './errors.js';

/** How long a lease holds without renewal: a holder that died frees it after this. */
export const LEASE_TTL_MS = 10_000;

interface LeaseDoc {
  /** The lease's generation: each new holder inserts the next one, so only a unique insert decides. */
  _id: number;
  holder: string;
  /** Epoch ms of the holder's last renewal; 0 once it let go. */
  renewed: number;
}

/**
 * Whether the server cannot be trusted with two writers of one kind on one database: FerretDB 1.x
 * (its buildInfo names itself) applies a conditional single-document update without isolating it from
 * concurrent ones (seen under 20 concurrent writers), and enforces a unique index over a whole array
 * rather than per element. The adapter then takes a lease instead of letting two writers race.
 */
export async function needsLease(db: Db): Promise<boolean> {
  const info = await db.admin().command({ buildInfo: 1 });
  return typeof info.ferretdbVersion === 'string';
}

/**
 * One holder at a time for `what` on a database (the projector on a projections database), on servers
 * whose conditional updates are not atomic: each lease generation is a document of its own, taken
 * by a unique insert (atomic on every server) and renewed only by its holder, so no two writers ever
 * race on one document. A newer generation than one's own means the lease was lost.
 */
export class Lease {
  private readonly holder = randomUUID();
  private generation = 0;
  private renewed = 0;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly leases: Collection<LeaseDoc>,
    private readonly what: string,
    private readonly ttlMs: number,
  ) {}

  /** Takes the lease or fails with STORE_UNAVAILABLE naming why (another holder is alive). */
  static async take(db: Db, what: string, ttlMs = LEASE_TTL_MS): Promise<Lease> {
    const lease = new Lease(db.collection<LeaseDoc>(`${what}_lease`), what, ttlMs);
    await lease.acquire();
    // Renewed while idle too, so a quiet holder keeps it; never keeps the process alive.
    lease.timer = setInterval(() => void lease.hold().catch(() => undefined), Math.max(100, ttlMs / 3));
    lease.timer.unref();
    return lease;
  }

  private async acquire(): Promise<void> {
    const [latest] = await this.leases.find({}).sort({ _id: -1 }).limit(1).toArray();
    const now = Date.now();
    if (latest && latest.holder !== this.holder && now - latest.renewed < this.ttlMs) throw this.held(latest);
    const generation = (latest?._id ?? 0) + 1;
    try {
      await this.leases.insertOne({ _id: generation, holder: this.holder, renewed: now });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const [winner] = await this.leases.find({}).sort({ _id: -1 }).limit(1).toArray();
      throw this.held(winner ?? { _id: generation, holder: 'another', renewed: now });
    }
    this.generation = generation;
    this.renewed = now;
  }

  private held(by: LeaseDoc): StoreError {
    return new StoreError(
      storeErrorCodes.UNAVAILABLE,
      `another ${this.what} (lease ${by._id}, renewed ${Math.max(0, Date.now() - by.renewed)} ms ago) holds this database: ` +
        `the server (FerretDB) cannot keep two of them apart safely, so this one waits until that lease ` +
        `is released or expires (${this.ttlMs} ms without renewal)`,
    );
  }

  /**
   * Makes sure this process still holds the lease before it writes: renews it, and takes it again when
   * it had lapsed and nobody else took it; fails with STORE_UNAVAILABLE when another holder has it.
   */
  async hold(): Promise<void> {
    const [latest] = await this.leases.find({}).sort({ _id: -1 }).limit(1).toArray();
    if (latest?._id !== this.generation || latest.holder !== this.holder) {
      // Lost to a newer holder (or never held): take it anew if that one lapsed too, else refuse.
      await this.acquire();
      return;
    }
    const now = Date.now();
    if (now - this.renewed < this.ttlMs / 3) return;
    await this.leases.updateOne({ _id: this.generation, holder: this.holder }, { $set: { renewed: now } });
    this.renewed = now;
  }

  /** Lets go (the next holder need not wait for the expiry). */
  async release(): Promise<void> {
    clearInterval(this.timer);
    await this.leases
      .updateOne({ _id: this.generation, holder: this.holder }, { $set: { renewed: 0 } })
      .catch(() => undefined);
  }
}
