import type { EntityName } from '@eggmesh/schema';
import type { WriteOperation } from '@eggmesh/store';
import { primaryEntities } from '@eggmesh/store-sqlite';
import type { PresetSpec } from './presets.js';
import { hashString, IdSpace, type Rng, rowRng } from './prng.js';

// Enum values as domain.md lists them (a unit test checks them against @eggmesh/schema).
export const zones = ['north', 'south', 'east', 'west', 'central'] as const;
export const breeds = ['leghorn', 'rhode_island_red', 'plymouth_rock', 'sussex', 'orpington'] as const;
const farmTypes = ['megafarm', 'local_farm', 'homestead'] as const;
const containerTypes = ['warehouse', 'market_shelf', 'fridge'] as const;
const consumerTypes = ['household', 'restaurant', 'bakery'] as const;
const qualities = ['grade_a', 'grade_b', 'cracked', 'double_yolk'] as const;
const withdrawalReasons = ['spoilage', 'breakage', 'quality_check'] as const;
const transportMethods = ['truck', 'van', 'cart'] as const;
const purposes = ['cooking', 'baking', 'resale', 'raw'] as const;

export const DAY_MS = 86_400_000;

export type Payload = Record<string, unknown>;

/** One generated entity: its id and its payload (without `id`). */
export interface Row {
  readonly entity: EntityName;
  readonly id: string;
  readonly payload: Payload;
}

export interface DatasetOptions {
  readonly preset: PresetSpec;
  readonly seed: number;
  /** A UTC midnight (epoch ms); events fall on the `days` days before it. */
  readonly anchorMs: number;
}

export interface DatasetCounts {
  readonly farm: number;
  readonly coop: number;
  readonly hen: number;
  readonly container: number;
  readonly consumer: number;
  readonly lay_report: number;
  readonly storage_deposit: number;
  readonly storage_withdrawal: number;
  readonly container_transfer: number;
  readonly consumption_report: number;
  readonly actors: number;
  readonly events: number;
  readonly total: number;
}

type GeneratedEntity = Exclude<EntityName, 'container_inventory' | 'hen_productivity' | 'farm_output'>;

/** Today's UTC midnight. */
export function utcMidnight(ms: number = Date.now()): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Residue `r` in [0, m) with `r ≡ -x (mod m)`. */
const negMod = (x: number, m: number): number => (((-x % m) + m) % m);

/**
 * A synthetic egg economy that is a pure function of (preset, seed, anchor): every row's id
 * and payload are computed from its index alone, so the bench, the baselines and the
 * generator agree on the data without sharing any state, and answers can be predicted.
 */
export class Dataset {
  readonly preset: PresetSpec;
  readonly seed: number;
  readonly anchorMs: number;
  readonly counts: DatasetCounts;
  readonly #ids: Record<GeneratedEntity, IdSpace>;
  readonly #salts: Record<GeneratedEntity, number>;

  constructor(options: DatasetOptions) {
    const p = options.preset;
    for (const [what, per] of [
      ['layReportsPerHen', p.layReportsPerHen],
      ['depositsPerContainer', p.depositsPerContainer],
    ] as const) {
      if (per < 1 || p.days % per !== 0) throw new Error(`preset ${p.name}: ${what} must divide days`);
    }
    if (p.transfersPerContainer === 1 && p.containers < 2) throw new Error('transfers need two containers');
    this.preset = p;
    this.seed = options.seed >>> 0;
    this.anchorMs = options.anchorMs;
    const kinds = primaryEntities as readonly GeneratedEntity[];
    this.#ids = Object.fromEntries(kinds.map((k) => [k, new IdSpace(this.seed, k)])) as Record<
      GeneratedEntity,
      IdSpace
    >;
    this.#salts = Object.fromEntries(kinds.map((k) => [k, hashString(this.seed ^ 0x5bd1e995, k)])) as Record<
      GeneratedEntity,
      number
    >;
    const coop = p.farms * p.coopsPerFarm;
    const hen = coop * p.hensPerCoop;
    const actors = p.farms + coop + hen + p.containers + p.consumers;
    const layReports = hen * p.layReportsPerHen;
    const deposits = p.containers * p.depositsPerContainer;
    const withdrawals = p.containers * p.withdrawalsPerContainer;
    const transfers = p.containers * p.transfersPerContainer;
    const events = layReports + deposits + withdrawals + transfers + p.consumptionReports;
    this.counts = Object.freeze({
      farm: p.farms,
      coop,
      hen,
      container: p.containers,
      consumer: p.consumers,
      lay_report: layReports,
      storage_deposit: deposits,
      storage_withdrawal: withdrawals,
      container_transfer: transfers,
      consumption_report: p.consumptionReports,
      actors,
      events,
      total: actors + events,
    });
  }

  id(entity: GeneratedEntity, index: number): string {
    return this.#ids[entity].id(index);
  }

  #rng(entity: GeneratedEntity, key: number): Rng {
    return rowRng(this.seed, this.#salts[entity], key);
  }

  #day(d: number): number {
    return this.anchorMs - (this.preset.days - d) * DAY_MS;
  }

  #timestamp(d: number, rng: Rng): string {
    return new Date(this.#day(d) + rng.int(0, DAY_MS - 1000)).toISOString();
  }

  // ---- actors -------------------------------------------------------------------------------

  farm(i: number): Row {
    const rng = this.#rng('farm', i);
    const payload: Payload = {
      name: `farm-${i}`,
      farm_type: farmTypes[i % farmTypes.length],
      zone: rng.pick(zones),
    };
    if (rng.chance(0.5)) payload.owner = `owner-${rng.int(1, 5000)}`;
    return { entity: 'farm', id: this.id('farm', i), payload };
  }

  coop(i: number): Row {
    const rng = this.#rng('coop', i);
    return {
      entity: 'coop',
      id: this.id('coop', i),
      payload: {
        name: `coop-${i}`,
        farm_id: this.id('farm', this.farmOfCoop(i)),
        capacity: rng.int(this.preset.hensPerCoop, this.preset.hensPerCoop * 2),
        coop_type: `type-${rng.int(1, 3)}`,
      },
    };
  }

  hen(i: number): Row {
    const rng = this.#rng('hen', i);
    const payload: Payload = {
      name: `hen-${i}`,
      coop_id: this.id('coop', this.coopOfHen(i)),
      breed: rng.pick(breeds),
      dob: new Date(this.anchorMs - rng.int(120, 900) * DAY_MS).toISOString().slice(0, 10),
    };
    const roll = rng.next();
    if (roll < 0.75) payload.status = 'active';
    else if (roll < 0.85) payload.status = 'retired';
    else if (roll < 0.9) payload.status = 'deceased';
    // else: no status (counts as active)
    return { entity: 'hen', id: this.id('hen', i), payload };
  }

  container(i: number): Row {
    const rng = this.#rng('container', i);
    return {
      entity: 'container',
      id: this.id('container', i),
      payload: {
        name: `container-${i}`,
        container_type: containerTypes[i % containerTypes.length],
        capacity: rng.int(500, 5000),
        zone: rng.pick(zones),
      },
    };
  }

  consumer(i: number): Row {
    const rng = this.#rng('consumer', i);
    const payload: Payload = {
      name: `consumer-${i}`,
      consumer_type: consumerTypes[i % consumerTypes.length],
      zone: rng.pick(zones),
    };
    if (rng.chance(0.7)) payload.weekly_demand = rng.int(0, 60);
    return { entity: 'consumer', id: this.id('consumer', i), payload };
  }

  farmOfCoop(coop: number): number {
    return Math.floor(coop / this.preset.coopsPerFarm);
  }

  coopOfHen(hen: number): number {
    return Math.floor(hen / this.preset.hensPerCoop);
  }

  coopsOfFarm(farm: number): number[] {
    const n = this.preset.coopsPerFarm;
    return Array.from({ length: n }, (_, j) => farm * n + j);
  }

  hensOfCoop(coop: number): number[] {
    const n = this.preset.hensPerCoop;
    return Array.from({ length: n }, (_, j) => coop * n + j);
  }

  // ---- events -------------------------------------------------------------------------------

  #layPeriod(): number {
    return this.preset.days / this.preset.layReportsPerHen;
  }

  /** The lay report hen `h` filed on day `d` (it files one every `days / layReportsPerHen` days). */
  layReport(h: number, d: number): Row {
    const key = h * this.preset.days + d;
    const rng = this.#rng('lay_report', key);
    const coop = this.coopOfHen(h);
    const payload: Payload = {
      hen_id: this.id('hen', h),
      coop_id: this.id('coop', coop),
      farm_id: this.id('farm', this.farmOfCoop(coop)),
      eggs: rng.int(2, 7),
      timestamp: this.#timestamp(d, rng),
    };
    if (rng.chance(0.9)) payload.quality = rng.pick(qualities);
    return { entity: 'lay_report', id: this.id('lay_report', key), payload };
  }

  /** Days on which hen `h` reports. */
  layDays(h: number): number[] {
    const period = this.#layPeriod();
    const days: number[] = [];
    for (let d = negMod(h, period); d < this.preset.days; d += period) days.push(d);
    return days;
  }

  /** Container events of day `d`, in log order. */
  *containerEventsOfDay(d: number): Generator<Row> {
    const p = this.preset;
    const days = p.days;
    const depositPeriod = days / p.depositsPerContainer;
    for (let c = negMod(d, depositPeriod); c < p.containers; c += depositPeriod) {
      const key = c * days + d;
      const rng = this.#rng('storage_deposit', key);
      const fromFarm = rng.chance(0.9);
      yield {
        entity: 'storage_deposit',
        id: this.id('storage_deposit', key),
        payload: {
          container_id: this.id('container', c),
          source_type: fromFarm ? 'farm' : 'transfer',
          source_id: fromFarm
            ? this.id('farm', rng.int(0, p.farms - 1))
            : this.id('container', rng.int(0, p.containers - 1)),
          eggs: rng.int(10, 60),
          timestamp: this.#timestamp(d, rng),
        },
      };
    }
    if (p.withdrawalsPerContainer === 1) {
      for (let c = negMod(d + 3, days); c < p.containers; c += days) {
        const key = c * days + d;
        const rng = this.#rng('storage_withdrawal', key);
        yield {
          entity: 'storage_withdrawal',
          id: this.id('storage_withdrawal', key),
          payload: {
            container_id: this.id('container', c),
            reason: rng.pick(withdrawalReasons),
            eggs: rng.int(1, 8),
            timestamp: this.#timestamp(d, rng),
          },
        };
      }
    }
    if (p.transfersPerContainer === 1) {
      for (let c = negMod(d + 11, days); c < p.containers; c += days) {
        const key = c * days + d;
        const rng = this.#rng('container_transfer', key);
        const dest = (c + 1 + rng.int(0, p.containers - 2)) % p.containers;
        yield {
          entity: 'container_transfer',
          id: this.id('container_transfer', key),
          payload: {
            source_container_id: this.id('container', c),
            dest_container_id: this.id('container', dest),
            eggs: rng.int(5, 20),
            timestamp: this.#timestamp(d, rng),
            transport_method: rng.pick(transportMethods),
          },
        };
      }
    }
    const total = p.consumptionReports;
    const perDay = Math.floor(total / days);
    const extra = total % days;
    const first = d * perDay + Math.min(d, extra);
    const count = perDay + (d < extra ? 1 : 0);
    for (let j = first; j < first + count; j++) {
      const rng = this.#rng('consumption_report', j);
      yield {
        entity: 'consumption_report',
        id: this.id('consumption_report', j),
        payload: {
          consumer_id: this.id('consumer', rng.int(0, p.consumers - 1)),
          container_id: this.id('container', rng.int(0, p.containers - 1)),
          eggs: rng.int(1, 12),
          timestamp: this.#timestamp(d, rng),
          purpose: rng.pick(purposes),
        },
      };
    }
  }

  /** Every row in log order: actors (farms, coops, hens, containers, consumers), then the events day by day
   * (container events first, lay reports last, so the final log entry is a lay report: see `finalProbe`). */
  *rows(): Generator<Row> {
    const c = this.counts;
    for (let i = 0; i < c.farm; i++) yield this.farm(i);
    for (let i = 0; i < c.coop; i++) yield this.coop(i);
    for (let i = 0; i < c.hen; i++) yield this.hen(i);
    for (let i = 0; i < c.container; i++) yield this.container(i);
    for (let i = 0; i < c.consumer; i++) yield this.consumer(i);
    const period = this.#layPeriod();
    for (let d = 0; d < this.preset.days; d++) {
      yield* this.containerEventsOfDay(d);
      for (let h = negMod(d, period); h < c.hen; h += period) yield this.layReport(h, d);
    }
  }

  /** `rows()` as store operations (all creates). */
  *operations(): Generator<WriteOperation> {
    for (const row of this.rows()) yield { op: 'create', entity: row.entity, id: row.id, payload: row.payload };
  }

  // ---- what the projections must say (domain.md §5) -------------------------------------------

  /** hen_productivity fields that do not depend on the reference time. */
  henProductivity(h: number): { hen_id: string; farm_id: string; total_eggs: number; quality_rate: number } {
    let total = 0;
    let good = 0;
    for (const d of this.layDays(h)) {
      const { payload } = this.layReport(h, d);
      const eggs = payload.eggs as number;
      total += eggs;
      const q = payload.quality;
      if (q === undefined || q === 'grade_a' || q === 'double_yolk') good += eggs;
    }
    return {
      hen_id: this.id('hen', h),
      farm_id: this.id('farm', this.farmOfCoop(this.coopOfHen(h))),
      total_eggs: total,
      quality_rate: total === 0 ? 0 : good / total,
    };
  }

  /** farm_output fields that do not depend on the reference time. */
  farmOutput(f: number): { farm_id: string; farm_type: string; total_hens: number; active_hens: number } {
    let total = 0;
    let active = 0;
    for (const coop of this.coopsOfFarm(f)) {
      for (const h of this.hensOfCoop(coop)) {
        total++;
        const status = this.hen(h).payload.status;
        if (status === undefined || status === 'active') active++;
      }
    }
    return {
      farm_id: this.id('farm', f),
      farm_type: this.farm(f).payload.farm_type as string,
      total_hens: total,
      active_hens: active,
    };
  }

  /** Sum of deposited eggs per container index (container_inventory.total_deposits), for the given containers. */
  depositTotals(containers: readonly number[]): Map<number, number> {
    const wanted = new Set(containers.map((c) => this.id('container', c)));
    const byId = new Map<string, number>();
    for (let d = 0; d < this.preset.days; d++) {
      for (const row of this.containerEventsOfDay(d)) {
        if (row.entity !== 'storage_deposit') continue;
        const id = row.payload.container_id as string;
        if (wanted.has(id)) byId.set(id, (byId.get(id) ?? 0) + (row.payload.eggs as number));
      }
    }
    return new Map(containers.map((c) => [c, byId.get(this.id('container', c)) ?? 0]));
  }

  /** The hen whose lay report is the last log entry, and its total: once a read shows this total,
   * the projector has applied the whole generated log. */
  finalProbe(): { henIndex: number; henId: string; totalEggs: number } {
    const period = this.#layPeriod();
    const lastDay = this.preset.days - 1;
    const first = negMod(lastDay, period);
    const henIndex = first + Math.floor((this.counts.hen - 1 - first) / period) * period;
    return {
      henIndex,
      henId: this.id('hen', henIndex),
      totalEggs: this.henProductivity(henIndex).total_eggs,
    };
  }
}
