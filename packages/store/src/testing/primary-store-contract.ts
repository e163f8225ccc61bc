import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isStoreError, storeErrorCodes } from '../errors.js';
import type { PrimaryStore, WriteOperation } from '../types.js';

/** What an adapter gives the contract suite: a fresh, empty store on a clock the suite controls. */
export interface ContractHarness {
  open(clock: () => number): Promise<PrimaryStore>;
  /** Called after each test with the store it opened. */
  dispose?(store: PrimaryStore): Promise<void>;
}

const farm = (over: Record<string, unknown> = {}) => ({
  name: 'Sunny Acres',
  farm_type: 'local_farm',
  zone: 'north',
  ...over,
});
const coop = (farmId: string, over: Record<string, unknown> = {}) => ({
  name: 'Coop',
  farm_id: farmId,
  capacity: 10,
  coop_type: 'barn',
  ...over,
});
const create = (entity: WriteOperation['entity'], payload: Record<string, unknown>, id = randomUUID()) =>
  ({ op: 'create', entity, id, payload }) as const;

/** The behaviour every PrimaryStore adapter must show. Call inside a test file of the adapter. */
export function runPrimaryStoreContract(name: string, harness: ContractHarness): void {
  describe(`PrimaryStore contract: ${name}`, () => {
    let store: PrimaryStore;
    let now = 1_000_000;
    const clock = () => now;

    beforeEach(async () => {
      now = 1_000_000;
      store = await harness.open(clock);
    });
    afterEach(async () => {
      await harness.dispose?.(store);
      await store.close();
    });

    it('creates a version and reads it back by id', async () => {
      const op = create('farm', farm());
      const result = await store.commit([op]);
      expect(result.records[0]).toMatchObject({ id: op.id, createdAt: now, payload: farm() });
      const read = await store.get('farm', op.id);
      expect(read).toEqual({ id: op.id, createdAt: now, payload: farm() });
      expect(await store.get('farm', randomUUID())).toBeNull();
    });

    it('rejects a second create of a live id and writes nothing from the failing commit', async () => {
      const a = create('farm', farm());
      await store.commit([a]);
      const headBefore = await store.log.head();
      const b = create('farm', farm({ name: 'B' }));
      const failure = await store.commit([b, create('farm', farm(), a.id)]).catch((e: unknown) => e);
      expect(isStoreError(failure, storeErrorCodes.ALREADY_EXISTS)).toBe(true);
      expect((failure as { index: number }).index).toBe(1);
      expect(await store.get('farm', b.id)).toBeNull();
      expect(await store.log.head()).toBe(headBefore);
    });

    it('rejects update and delete of a missing id', async () => {
      const id = randomUUID();
      for (const op of [
        { op: 'update', entity: 'farm', id, payload: farm() },
        { op: 'delete', entity: 'farm', id },
      ] as const) {
        const failure = await store.commit([op]).catch((e: unknown) => e);
        expect(isStoreError(failure, storeErrorCodes.NOT_FOUND)).toBe(true);
      }
      expect(await store.log.head()).toBe(0);
    });

    it('reads the newest version at a time, inclusive of the version time', async () => {
      const op = create('farm', farm({ name: 'v1' }));
      await store.commit([op]);
      const t1 = now;
      now += 10;
      await store.commit([{ op: 'update', entity: 'farm', id: op.id, payload: farm({ name: 'v2' }) }]);
      const t2 = now;
      expect((await store.get('farm', op.id))?.payload.name).toBe('v2');
      expect((await store.get('farm', op.id, { at: t1 }))?.payload.name).toBe('v1');
      expect((await store.get('farm', op.id, { at: t2 - 1 }))?.payload.name).toBe('v1');
      expect((await store.get('farm', op.id, { at: t2 }))?.payload.name).toBe('v2');
      expect(await store.get('farm', op.id, { at: t1 - 1 })).toBeNull();
    });

    it('hides deleted entities now but not at a time before the delete; an id can be created again', async () => {
      const op = create('farm', farm());
      await store.commit([op]);
      const before = now;
      now += 5;
      const deleted = await store.commit([{ op: 'delete', entity: 'farm', id: op.id }]);
      expect(deleted.records[0]?.id).toBe(op.id);
      expect(await store.get('farm', op.id)).toBeNull();
      expect(await store.get('farm', op.id, { at: now })).toBeNull();
      expect((await store.get('farm', op.id, { at: before }))?.payload.name).toBe('Sunny Acres');
      expect(await store.list('farm', { limit: 10 })).toEqual([]);
      expect(await store.findBy('farm', 'zone', 'north', { limit: 10 })).toEqual([]);
      now += 5;
      await store.commit([create('farm', farm({ name: 'again' }), op.id)]);
      expect((await store.get('farm', op.id))?.payload.name).toBe('again');
    });

    it('orders versions of one id strictly even within one millisecond, and log times never go back', async () => {
      const op = create('farm', farm());
      await store.commit([op]);
      for (let i = 0; i < 5; i++) {
        await store.commit([{ op: 'update', entity: 'farm', id: op.id, payload: farm({ name: `n${i}` }) }]);
      }
      await store.commit([create('farm', farm())]);
      const entries = await store.log.read(0, 100);
      const ours = entries.filter((e) => e.id === op.id).map((e) => e.createdAt);
      expect(new Set(ours).size).toBe(ours.length);
      for (let i = 1; i < entries.length; i++) {
        expect(entries[i]!.createdAt).toBeGreaterThanOrEqual(entries[i - 1]!.createdAt);
      }
      for (let i = 1; i < ours.length; i++) expect(ours[i]!).toBeGreaterThan(ours[i - 1]!);
      // Each version is reachable at its own time.
      expect((await store.get('farm', op.id, { at: ours[2]! }))?.payload.name).toBe('n1');
    });

    it('finds by an indexed field now and at a time, following a change of the field', async () => {
      const f1 = randomUUID();
      const f2 = randomUUID();
      const c = create('coop', coop(f1));
      const other = create('coop', coop(f1, { name: 'other' }));
      await store.commit([c, other, create('coop', coop(f2))]);
      const t1 = now;
      now += 10;
      await store.commit([{ op: 'update', entity: 'coop', id: c.id, payload: coop(f2) }]);
      const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();
      expect(ids(await store.findBy('coop', 'farm_id', f1, { limit: 10 }))).toEqual([other.id]);
      expect(ids(await store.findBy('coop', 'farm_id', f1, { limit: 10, at: t1 }))).toEqual(
        [c.id, other.id].sort(),
      );
      expect(await store.findBy('coop', 'farm_id', f2, { limit: 10 })).toHaveLength(2);
      expect(await store.findBy('coop', 'farm_id', f2, { limit: 10, at: t1 })).toHaveLength(1);
      const any = await store.findByAny('coop', 'farm_id', [f1, f2, randomUUID()]);
      expect(any).toHaveLength(3);
      const anyAt = await store.findByAny('coop', 'farm_id', [f1], { at: t1 });
      expect(ids(anyAt)).toEqual([c.id, other.id].sort());
    });

    it('pages findByAny per value: the first `limit` rows of each value in id order, after a cursor', async () => {
      const f1 = randomUUID();
      const f2 = randomUUID();
      const ops = [
        ...Array.from({ length: 5 }, () => create('coop', coop(f1))),
        ...Array.from({ length: 2 }, () => create('coop', coop(f2))),
      ];
      await store.commit(ops);
      const t = now;
      now += 10;
      await store.commit([create('coop', coop(f1))]);
      const of = (farmId: string) =>
        ops
          .filter((o) => o.payload.farm_id === farmId)
          .map((o) => o.id)
          .sort();
      const byFarm = (rows: { id: string; payload: Record<string, unknown> }[], farmId: string) =>
        rows
          .filter((r) => r.payload.farm_id === farmId)
          .map((r) => r.id)
          .sort();
      const page = await store.findByAny('coop', 'farm_id', [f1, f2, f1], { limit: 3, at: t });
      expect(byFarm(page, f1)).toEqual(of(f1).slice(0, 3));
      expect(byFarm(page, f2)).toEqual(of(f2));
      expect(page).toHaveLength(5);
      const next = await store.findByAny('coop', 'farm_id', [f1, f2], { limit: 3, at: t, after: of(f1)[2] });
      expect(byFarm(next, f1)).toEqual(of(f1).slice(3));
      expect(byFarm(next, f2)).toEqual(of(f2).filter((id) => id > of(f1)[2]!));
      expect(await store.findByAny('coop', 'farm_id', [f1], { limit: 100 })).toHaveLength(6);
      expect(await store.findByAny('coop', 'farm_id', [f1], { limit: 1 })).toHaveLength(1);
    });

    it('refuses to filter on a field that is not indexed', async () => {
      const failure = await Promise.resolve()
        .then(() => store.findBy('farm', 'name', 'x', { limit: 1 }))
        .catch((e: unknown) => e);
      expect(isStoreError(failure, storeErrorCodes.UNKNOWN_FIELD)).toBe(true);
    });

    it('lists in id order with a limit and an id cursor, now and at a time', async () => {
      const ops = Array.from({ length: 7 }, () => create('container', container()));
      await store.commit(ops);
      const t = now;
      now += 1;
      await store.commit([create('container', container())]);
      const sorted = ops.map((o) => o.id).sort();
      const page1 = await store.list('container', { limit: 3, at: t });
      expect(page1.map((r) => r.id)).toEqual(sorted.slice(0, 3));
      const page2 = await store.list('container', { limit: 3, at: t, after: page1[2]!.id });
      expect(page2.map((r) => r.id)).toEqual(sorted.slice(3, 6));
      expect(await store.list('container', { limit: 100 })).toHaveLength(8);
      expect(await store.list('container', { limit: 100, at: t })).toHaveLength(7);
      const many = await store.getMany('container', [sorted[0]!, sorted[1]!, randomUUID(), sorted[0]!]);
      expect(many.map((r) => r.id).sort()).toEqual(sorted.slice(0, 2));
    });

    it('appends one gapless log entry per change, with the payload and what it replaced', async () => {
      const op = create('farm', farm());
      const r1 = await store.commit([op, create('farm', farm())]);
      expect(r1.position).toBe(2);
      await store.commit([create('farm', farm(), op.id)]).catch(() => undefined);
      const r2 = await store.commit([
        { op: 'update', entity: 'farm', id: op.id, payload: farm({ zone: 'south' }) },
      ]);
      const r3 = await store.commit([{ op: 'delete', entity: 'farm', id: op.id }]);
      expect([r2.position, r3.position]).toEqual([3, 4]);
      expect(await store.log.head()).toBe(4);
      const entries = await store.log.read(0, 10);
      expect(entries.map((e) => e.position)).toEqual([1, 2, 3, 4]);
      expect(entries[0]).toMatchObject({
        entity: 'farm',
        id: op.id,
        op: 'create',
        payload: farm(),
        previous: null,
      });
      expect(entries[2]).toMatchObject({ op: 'update', payload: farm({ zone: 'south' }), previous: farm() });
      expect(entries[3]).toMatchObject({ op: 'delete', payload: null, previous: farm({ zone: 'south' }) });
      expect((await store.log.read(2, 1)).map((e) => e.position)).toEqual([3]);
    });
  });
}

function container(over: Record<string, unknown> = {}) {
  return { name: 'Shelf', container_type: 'fridge', capacity: 100, zone: 'east', ...over };
}
