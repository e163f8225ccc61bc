/** A small deterministic PRNG (mulberry32) so a seed gives the same economy every time. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}

export interface EconomySize {
  readonly farms: number;
  readonly coopsPerFarm: number;
  readonly hensPerCoop: number;
  readonly containers: number;
  readonly consumers: number;
  readonly days: number;
}

export const presets: Record<'small' | 'medium' | 'large', EconomySize> = {
  small: { farms: 3, coopsPerFarm: 2, hensPerCoop: 6, containers: 6, consumers: 10, days: 14 },
  medium: { farms: 20, coopsPerFarm: 3, hensPerCoop: 8, containers: 30, consumers: 60, days: 30 },
  large: { farms: 100, coopsPerFarm: 4, hensPerCoop: 10, containers: 150, consumers: 400, days: 30 },
};

const zones = ['north', 'south', 'east', 'west', 'central'] as const;
const breeds = ['leghorn', 'rhode_island_red', 'plymouth_rock', 'sussex', 'orpington'] as const;
const DAY = 86_400_000;

export type Batch = { readonly entity: string; readonly rows: Record<string, unknown>[] };

/**
 * A realistic egg economy as REST payloads, in dependency order: actors first, then a history of
 * events over the last `days` days ending at `now`.
 */
export function economy(size: EconomySize, seed: number, now: number): Batch[] {
  const r = prng(seed);
  const id = () => randomUUIDFrom(r.next);
  const farms = Array.from({ length: size.farms }, (_, i) => ({
    id: id(),
    name: `Farm ${i + 1}`,
    farm_type: r.pick(['megafarm', 'local_farm', 'homestead'] as const),
    zone: r.pick(zones),
    owner: `Owner ${i + 1}`,
  }));
  const coops = farms.flatMap((farm, f) =>
    Array.from({ length: size.coopsPerFarm }, (_, i) => ({
      id: id(),
      name: `Coop ${f + 1}.${i + 1}`,
      farm_id: farm.id,
      capacity: size.hensPerCoop + r.int(0, 10),
      coop_type: r.pick(['barn', 'free_range', 'mobile']),
    })),
  );
  const farmOfCoop = new Map(coops.map((c) => [c.id, c.farm_id]));
  const hens = coops.flatMap((coop, c) =>
    Array.from({ length: size.hensPerCoop }, (_, i) => ({
      id: id(),
      name: `Hen ${c + 1}.${i + 1}`,
      coop_id: coop.id,
      breed: r.pick(breeds),
      dob: new Date(now - r.int(200, 1200) * DAY).toISOString().slice(0, 10),
      status: r.next() < 0.85 ? 'active' : r.pick(['retired', 'deceased'] as const),
    })),
  );
  const containers = Array.from({ length: size.containers }, (_, i) => ({
    id: id(),
    name: `Container ${i + 1}`,
    container_type: r.pick(['warehouse', 'market_shelf', 'fridge'] as const),
    capacity: r.pick([200, 500, 1000, 5000]),
    zone: r.pick(zones),
  }));
  const consumers = Array.from({ length: size.consumers }, (_, i) => ({
    id: id(),
    name: `Consumer ${i + 1}`,
    consumer_type: r.pick(['household', 'restaurant', 'bakery'] as const),
    zone: r.pick(zones),
    weekly_demand: r.int(6, 120),
  }));

  // A time on the UTC day `day` days before now, never later than now (so day 0 counts as today).
  const at = (day: number) => {
    const start = Math.floor((now - day * DAY) / DAY) * DAY;
    const end = Math.min(start + DAY - 1, now);
    return new Date(start + Math.floor(r.next() * (end - start + 1))).toISOString();
  };
  const layReports: Record<string, unknown>[] = [];
  const deposits: Record<string, unknown>[] = [];
  const transfers: Record<string, unknown>[] = [];
  const withdrawals: Record<string, unknown>[] = [];
  const consumption: Record<string, unknown>[] = [];
  for (let day = size.days - 1; day >= 0; day--) {
    for (const hen of hens) {
      if (hen.status !== 'active' || r.next() < 0.2) continue;
      layReports.push({
        hen_id: hen.id,
        coop_id: hen.coop_id,
        farm_id: farmOfCoop.get(hen.coop_id),
        eggs: r.int(1, 2),
        timestamp: at(day),
        quality: r.pick(['grade_a', 'grade_a', 'grade_a', 'grade_b', 'double_yolk', 'cracked'] as const),
      });
    }
    for (const farm of farms) {
      deposits.push({
        container_id: r.pick(containers).id,
        source_type: 'farm',
        source_id: farm.id,
        eggs: r.int(5, 40),
        timestamp: at(day),
      });
    }
    if (containers.length > 1) {
      for (let i = 0; i < Math.ceil(containers.length / 3); i++) {
        const source = r.pick(containers);
        let dest = r.pick(containers);
        while (dest.id === source.id) dest = r.pick(containers);
        transfers.push({
          source_container_id: source.id,
          dest_container_id: dest.id,
          eggs: r.int(1, 15),
          timestamp: at(day),
          transport_method: r.pick(['truck', 'van', 'cart'] as const),
        });
      }
    }
    for (let i = 0; i < Math.ceil(containers.length / 4); i++) {
      withdrawals.push({
        container_id: r.pick(containers).id,
        reason: r.pick(['spoilage', 'breakage', 'quality_check'] as const),
        eggs: r.int(1, 4),
        timestamp: at(day),
      });
    }
    for (const consumer of consumers) {
      if (r.next() < 0.5) continue;
      consumption.push({
        consumer_id: consumer.id,
        container_id: r.pick(containers).id,
        eggs: r.int(1, 12),
        timestamp: at(day),
        purpose: r.pick(['cooking', 'baking', 'resale', 'raw'] as const),
      });
    }
  }
  return [
    { entity: 'farm', rows: farms },
    { entity: 'coop', rows: coops },
    { entity: 'hen', rows: hens },
    { entity: 'container', rows: containers },
    { entity: 'consumer', rows: consumers },
    { entity: 'lay_report', rows: layReports },
    { entity: 'storage_deposit', rows: deposits },
    { entity: 'container_transfer', rows: transfers },
    { entity: 'storage_withdrawal', rows: withdrawals },
    { entity: 'consumption_report', rows: consumption },
  ];
}

/** A UUID v4 drawn from the PRNG, so seeded runs repeat their ids. */
function randomUUIDFrom(next: () => number): string {
  const bytes = Array.from({ length: 16 }, () => Math.floor(next() * 256));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
