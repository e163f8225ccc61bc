import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangeSignal, openPrimaryStore, type SqlitePrimaryStore } from '@eggmesh/store-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const farm = { name: 'F', farm_type: 'homestead', zone: 'north' };

describe('ChangeSignal on a real SQLite primary', () => {
  let dir: string;
  let store: SqlitePrimaryStore;
  let signal: ChangeSignal;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eggmesh-signal-'));
    store = openPrimaryStore({ file: join(dir, 'primary.db') });
    signal = new ChangeSignal([join(dir, 'primary.db')]);
  });

  afterEach(async () => {
    signal.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('wakes a waiter when a commit lands, long before its timeout', async () => {
    const seen = signal.version;
    const woken = signal.next(seen, 600_000).then(() => signal.version);
    store.commitSync([{ op: 'create', entity: 'farm', id: crypto.randomUUID(), payload: farm }]);
    expect(await woken).toBeGreaterThan(seen);
  });

  it('returns at once when a change landed after the caller looked', async () => {
    const seen = signal.version;
    store.commitSync([{ op: 'create', entity: 'farm', id: crypto.randomUUID(), payload: farm }]);
    while (signal.version === seen) await new Promise((resolve) => setTimeout(resolve, 5));
    await signal.next(seen, 600_000);
    expect(signal.version).toBeGreaterThan(seen);
  });

  it('falls back to the timeout when nothing changes, and an abort ends the wait', async () => {
    const seen = signal.version;
    await signal.next(seen, 30);
    expect(signal.version).toBe(seen);
    const abort = new AbortController();
    const waiting = signal.next(seen, 600_000, abort.signal);
    abort.abort();
    await waiting;
    expect(signal.version).toBe(seen);
  });

  it('wakes a waiter again after an event that came before the change was visible', async () => {
    // A commit writes its WAL frames (the file event) before it publishes them in the WAL index (no
    // event): a waiter woken by the event may look too early. Here the "commit" becomes visible only
    // after the waiter has looked, with no further file event; the wait's own timeout is 10 minutes.
    const wal = new ChangeSignal([join(dir, 'early.db')]);
    try {
      let visible = false;
      let looks = 0;
      const waiter = (async () => {
        for (;;) {
          const seen = wal.version;
          looks++;
          if (visible) return;
          await wal.next(seen, 600_000);
        }
      })();
      const before = looks;
      appendFileSync(join(dir, 'early.db-wal'), 'frames');
      while (looks === before) await new Promise((resolve) => setTimeout(resolve, 1));
      visible = true;
      await waiter;
      expect(looks).toBeGreaterThan(before + 1);
    } finally {
      wal.close();
    }
  });

  it('ignores files that are not the watched database', async () => {
    const other = openPrimaryStore({ file: join(dir, 'other.db') });
    try {
      const seen = signal.version;
      other.commitSync([{ op: 'create', entity: 'farm', id: crypto.randomUUID(), payload: farm }]);
      await signal.next(seen, 200);
      expect(signal.version).toBe(seen);
    } finally {
      await other.close();
    }
  });

  describe('watching only while waited on (a read side)', () => {
    it('is not woken by commits until someone waits, then wakes its waiters', async () => {
      const lazy = new ChangeSignal([join(dir, 'primary.db')], { watchWhileWaitedMs: 60_000 });
      try {
        const before = lazy.version;
        store.commitSync([{ op: 'create', entity: 'farm', id: crypto.randomUUID(), payload: farm }]);
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(lazy.watching).toBe(false);
        expect(lazy.version).toBe(before);
        // The first wait starts the watch and returns at once with a change counted: look again.
        await lazy.next(before, 600_000);
        expect(lazy.watching).toBe(true);
        expect(lazy.version).toBeGreaterThan(before);
        const seen = lazy.version;
        const woken = lazy.next(seen, 600_000).then(() => lazy.version);
        store.commitSync([{ op: 'create', entity: 'farm', id: crypto.randomUUID(), payload: farm }]);
        expect(await woken).toBeGreaterThan(seen);
      } finally {
        lazy.close();
      }
    });

    it('stops watching once nobody has waited for the given time', async () => {
      const lazy = new ChangeSignal([join(dir, 'primary.db')], { watchWhileWaitedMs: 50 });
      try {
        await lazy.next(lazy.version, 10);
        expect(lazy.watching).toBe(true);
        // A wait that lasts longer than the idle time keeps the watch on.
        await lazy.next(lazy.version, 120);
        expect(lazy.watching).toBe(true);
        const deadline = Date.now() + 5000;
        while (lazy.watching && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 10));
        expect(lazy.watching).toBe(false);
        const seen = lazy.version;
        store.commitSync([{ op: 'create', entity: 'farm', id: crypto.randomUUID(), payload: farm }]);
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(lazy.version).toBe(seen);
      } finally {
        lazy.close();
      }
    });
  });
});
