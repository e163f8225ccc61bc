/** What the dashboard reads from /graphql, and the numbers it derives from it (pure functions). */

export interface Farm {
  readonly id: string;
  readonly name: string;
  readonly farm_type: string;
  readonly zone: string;
}
export interface FarmOutput {
  readonly farm_id: string;
  readonly farm_type: string;
  readonly eggs_week: number | null;
  readonly active_hens: number | null;
}
export interface HenProductivity {
  readonly hen_id: string;
  readonly farm_id: string | null;
  readonly eggs_week: number | null;
}
export interface Container {
  readonly id: string;
  readonly name: string;
  readonly zone: string;
}
export interface ContainerInventory {
  readonly container_id: string;
  readonly current_eggs: number | null;
  readonly utilization_pct: number;
}
export interface ConsumptionReport {
  readonly id: string;
  readonly container_id: string;
  readonly eggs: number | null;
  readonly timestamp: string;
  readonly purpose: string | null;
}

/** Everything on screen: the actors and events as read, the projections keyed by their entity's id. */
export interface Economy {
  farms: Map<string, Farm>;
  hens: Map<string, string>;
  containers: Map<string, Container>;
  consumption: ConsumptionReport[];
  farmOutput: Map<string, FarmOutput>;
  henProductivity: Map<string, HenProductivity>;
  containerInventory: Map<string, ContainerInventory>;
}

export interface Bar {
  readonly label: string;
  readonly value: number;
}

export interface View {
  readonly farms: number;
  readonly eggsWeek: number;
  readonly activeHens: number;
  /** Eggs laid this week per active hen, 2 decimals; 0 without active hens. */
  readonly eggsPerHen: number;
  readonly eggsByType: Bar[];
  readonly farmTypes: Bar[];
  readonly utilization: Bar[];
  readonly purposes: Bar[];
  readonly topFarms: Bar[];
  readonly topHens: Bar[];
  readonly latest: Array<ConsumptionReport & { readonly container: string }>;
}

const sum = (values: Iterable<number>) => {
  let total = 0;
  for (const v of values) total += v;
  return total;
};

function tally(pairs: Iterable<[string, number]>): Bar[] {
  const totals = new Map<string, number>();
  for (const [label, value] of pairs) totals.set(label, (totals.get(label) ?? 0) + value);
  return [...totals].map(([label, value]) => ({ label, value })).sort(byValue);
}

const byValue = (a: Bar, b: Bar) => b.value - a.value || a.label.localeCompare(b.label);

/** The numbers of one zone ('' for the whole country). */
export function view(economy: Economy, zone: string): View {
  const inZone = (z: string | undefined) => zone === '' || z === zone;
  const farms = [...economy.farms.values()].filter((f) => inZone(f.zone));
  const farmIds = new Set(farms.map((f) => f.id));
  const outputs = [...economy.farmOutput.values()].filter((o) => farmIds.has(o.farm_id));
  const eggsWeek = sum(outputs.map((o) => o.eggs_week ?? 0));
  const activeHens = sum(outputs.map((o) => o.active_hens ?? 0));
  const containers = [...economy.containers.values()].filter((c) => inZone(c.zone));
  const containerIds = new Set(containers.map((c) => c.id));
  const consumption = economy.consumption.filter((r) => containerIds.has(r.container_id));
  const farmName = (id: string | null) => (id ? economy.farms.get(id)?.name : undefined) ?? 'unknown farm';
  return {
    farms: farms.length,
    eggsWeek,
    activeHens,
    eggsPerHen: activeHens === 0 ? 0 : Math.round((eggsWeek / activeHens) * 100) / 100,
    eggsByType: tally(outputs.map((o) => [o.farm_type, o.eggs_week ?? 0])),
    farmTypes: tally(farms.map((f) => [f.farm_type, 1])),
    utilization: containers
      .map((c) => ({ label: c.name, value: economy.containerInventory.get(c.id)?.utilization_pct ?? 0 }))
      .sort(byValue),
    purposes: tally(consumption.map((r) => [r.purpose ?? 'unspecified', r.eggs ?? 0])),
    topFarms: outputs
      .map((o) => ({ label: farmName(o.farm_id), value: o.eggs_week ?? 0 }))
      .sort(byValue)
      .slice(0, 10),
    topHens: [...economy.henProductivity.values()]
      .filter((h) => h.farm_id !== null && farmIds.has(h.farm_id))
      .map((h) => ({
        label: `${economy.hens.get(h.hen_id) ?? 'hen'} (${farmName(h.farm_id)})`,
        value: h.eggs_week ?? 0,
      }))
      .sort(byValue)
      .slice(0, 10),
    latest: [...consumption]
      .sort((a, b) => b.timestamp.localeCompare(a.timestamp) || b.id.localeCompare(a.id))
      .slice(0, 10)
      .map((r) => ({ ...r, container: economy.containers.get(r.container_id)?.name ?? r.container_id })),
  };
}

/** The zones any farm or container is in, sorted. */
export function zonesOf(economy: Economy): string[] {
  const zones = new Set<string>();
  for (const f of economy.farms.values()) zones.add(f.zone);
  for (const c of economy.containers.values()) zones.add(c.zone);
  return [...zones].sort();
}
