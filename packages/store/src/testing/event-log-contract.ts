import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EntityWriter, EventLog, LogEntry, WriteOperation } from '../types.js';

/** A fresh, empty event log and a way to append to it. */
export interface EventLogFixture {
  readonly log: EventLog;
  /** Commits writes the log must show: the PrimaryStore the log belongs to, or the primary a relay copies from. */
  readonly writer: EntityWriter;
  /** Releases everything the fixture opened (the log's own `close()` is called by the suite). */
  dispose?(): Promise<void>;
}

export interface EventLogHarness {
  open(): Promise<EventLogFixture>;
}

const farm = (name = 'Farm') => ({ name, farm_type: 'homestead', zone: 'north' });
const createFarm = (name?: string): WriteOperation => ({
  op: 'create',
  entity: 'farm',
  id: randomUUID(),
  payload: farm(name),
});

/** How long the suite lets a log take to show a commit (a relay may copy it first). */
const SETTLE_MS = 10_000;

/**
 * Waits (on the log's own wake-up) until it holds `count` entries and returns them. The suite never
 * assumes the log's positions equal the writer's (a relay may number them its own way).
 */
async function settle(log: EventLog, count: number): Promise<LogEntry[]> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const entries = await readAll(log, 0, 1000);
    if (entries.length >= count) return entries;
    const left = deadline - Date.now();
    if (left <= 0)
      throw new Error(`the log held ${entries.length} of ${count} entries after ${SETTLE_MS} ms`);
    await log.waitBeyond(entries[entries.length - 1]?.position ?? 0, left);
  }
}

/** Reads everything after `after` in pages of `limit`. */
async function readAll(log: EventLog, after: number, limit: number): Promise<LogEntry[]> {
  const out: LogEntry[] = [];
  for (let from = after; ; ) {
    const page = await log.read(from, limit);
    if (page.length === 0) return out;
    expect(page.length).toBeLessThanOrEqual(limit);
    out.push(...page);
    from = page[page.length - 1]!.position;
  }
}

/** The behaviour every EventLog adapter must show. Call inside a test file of the adapter. */
export function runEventLogContract(name: string, harness: EventLogHarness): void {
  describe(`EventLog contract: ${name}`, () => {
    let fixture: EventLogFixture;
    let log: EventLog;
    const commit = async (...operations: WriteOperation[]) => {
      await fixture.writer.commit(operations);
    };

    beforeEach(async () => {
      fixture = await harness.open();
      log = fixture.log;
    });
    afterEach(async () => {
      await log.close();
      await fixture.dispose?.();
    });

    it('starts empty: head 0, nothing to read, and a wait on it times out with false', async () => {
      expect(await log.head()).toBe(0);
      expect(await log.read(0, 10)).toEqual([]);
      expect(await log.waitBeyond(0, 20)).toBe(false);
    });

    it('holds every committed change once, in commit order, with payload and what it replaced', async () => {
      const a = createFarm('a');
      const b = createFarm('b');
      await commit(a, b);
      await commit({ op: 'update', entity: 'farm', id: a.id, payload: farm('a2') });
      await commit({ op: 'delete', entity: 'farm', id: b.id });
      const entries = await settle(log, 4);
      expect(await log.read(0, 100)).toEqual(entries);
      expect(entries.map((e) => [e.id, e.op])).toEqual([
        [a.id, 'create'],
        [b.id, 'create'],
        [a.id, 'update'],
        [b.id, 'delete'],
      ]);
      expect(entries[0]).toMatchObject({ entity: 'farm', payload: farm('a'), previous: null });
      expect(entries[2]).toMatchObject({ payload: farm('a2'), previous: farm('a') });
      expect(entries[3]).toMatchObject({ payload: null, previous: farm('b') });
      expect(await log.head()).toBe(entries[3]!.position);
      for (let i = 1; i < entries.length; i++) {
        expect(entries[i]!.position).toBeGreaterThan(entries[i - 1]!.position);
        expect(entries[i]!.createdAt).toBeGreaterThanOrEqual(entries[i - 1]!.createdAt);
      }
    });

    it('gives back payloads exactly as written, whatever their text holds', async () => {
      const awkward = {
        name: 'quote " backslash \\ slash / newline \n tab \t nul \u0000 line-sep \u2028 é 🥚',
        'key with "quotes"': ['[', ']', ',', '{"not": "an object"}', '', null],
        nested: { deep: { list: [1, -0.5, 1e21, 123456789012345, true, false, null] } },
        farm_type: 'homestead',
        zone: 'north',
      };
      const a = { op: 'create', entity: 'farm', id: randomUUID(), payload: awkward } as const;
      await commit(a);
      await commit({ op: 'update', entity: 'farm', id: a.id, payload: { ...awkward, name: '' } });
      const entries = await settle(log, 2);
      expect(entries[0]).toMatchObject({ id: a.id, payload: awkward, previous: null });
      expect(entries[1]).toMatchObject({ id: a.id, payload: { ...awkward, name: '' }, previous: awkward });
    });

    it('pages with after and limit without skipping or repeating an entry', async () => {
      for (let i = 0; i < 7; i++) await commit(createFarm(`f${i}`), createFarm(`g${i}`));
      const all = await settle(log, 14);
      expect(all).toHaveLength(14);
      const last = all[13]!.position;
      for (const limit of [1, 3, 5]) expect(await readAll(log, 0, limit)).toEqual(all);
      const middle = all[5]!.position;
      expect(await log.read(middle, 2)).toEqual(all.slice(6, 8));
      expect(await log.read(last, 10)).toEqual([]);
    });

    it('shows concurrent commits each exactly once to a consumer reading as they land', async () => {
      const ops = Array.from({ length: 20 }, (_, i) => createFarm(`c${i}`));
      const seen: LogEntry[] = [];
      let after = 0;
      const writes = Promise.all(ops.map((op) => commit(op)));
      // A consumer follows the log while the commits land, like the projector does.
      while (seen.length < ops.length) {
        if (!(await log.waitBeyond(after, SETTLE_MS))) throw new Error('the log stopped moving');
        const page = await log.read(after, 3);
        seen.push(...page);
        if (page.length > 0) after = page[page.length - 1]!.position;
      }
      await writes;
      expect(seen.map((e) => e.id).sort()).toEqual(ops.map((o) => o.id).sort());
      expect(await readAll(log, 0, 4)).toEqual(seen);
    });

    it('waitBeyond answers true at once when the head is already past, and false on timeout', async () => {
      await commit(createFarm());
      const last = (await settle(log, 1))[0]!.position;
      expect(await log.waitBeyond(last - 1, 60_000)).toBe(true);
      expect(await log.waitBeyond(0, 60_000)).toBe(true);
      expect(await log.waitBeyond(last, 30)).toBe(false);
    });

    it('waitBeyond wakes on a commit long before its timeout', async () => {
      const head = await log.head();
      const woken = log.waitBeyond(head, 60_000);
      await commit(createFarm());
      expect(await woken).toBe(true);
      expect(await log.head()).toBeGreaterThan(head);
    });

    it('waitBeyond ends with false when its signal aborts, or was aborted already', async () => {
      const abort = new AbortController();
      const waiting = log.waitBeyond(await log.head(), 60_000, abort.signal);
      abort.abort();
      expect(await waiting).toBe(false);
      expect(await log.waitBeyond(await log.head(), 60_000, abort.signal)).toBe(false);
    });

    it('acknowledge takes a consumed position and changes nothing a reader sees', async () => {
      await commit(createFarm(), createFarm());
      const before = await settle(log, 2);
      const last = before[1]!.position;
      await log.acknowledge(last);
      expect(await log.read(0, 10)).toEqual(before);
      expect(await log.head()).toBe(last);
    });
  });
}
