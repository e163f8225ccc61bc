/** Sizes of a synthetic egg economy. Coops per farm and hens per coop are the same in every preset,
 * so a depth-3 tree has the same size everywhere and only the table sizes change (scaling curve). */
export interface PresetSpec {
  readonly name: PresetName;
  readonly farms: number;
  readonly coopsPerFarm: number;
  readonly hensPerCoop: number;
  readonly containers: number;
  readonly consumers: number;
  /** Days of events, ending the day before the anchor. */
  readonly days: number;
  /** Lay reports per hen over `days`; must divide `days`. */
  readonly layReportsPerHen: number;
  /** Storage deposits per container over `days`; must divide `days`. */
  readonly depositsPerContainer: number;
  /** 0 or 1 per container over `days`. */
  readonly withdrawalsPerContainer: 0 | 1;
  /** 0 or 1 per container over `days` (to another container). */
  readonly transfersPerContainer: 0 | 1;
  /** Consumption reports in total, spread evenly over the days. */
  readonly consumptionReports: number;
}

export const presetNames = ['tiny', 'small', 'medium', 'national'] as const;
export type PresetName = (typeof presetNames)[number];

const shape = { coopsPerFarm: 3, hensPerCoop: 30 } as const;

export const presets: Readonly<Record<PresetName, PresetSpec>> = Object.freeze({
  /** `--quick`: loads in well under a second. */
  tiny: {
    name: 'tiny',
    farms: 4,
    ...shape,
    containers: 6,
    consumers: 20,
    days: 10,
    layReportsPerHen: 2,
    depositsPerContainer: 2,
    withdrawalsPerContainer: 1,
    transfersPerContainer: 1,
    consumptionReports: 20,
  },
  small: {
    name: 'small',
    farms: 50,
    ...shape,
    containers: 300,
    consumers: 5_000,
    days: 30,
    layReportsPerHen: 5,
    depositsPerContainer: 6,
    withdrawalsPerContainer: 1,
    transfersPerContainer: 1,
    consumptionReports: 2_000,
  },
  medium: {
    name: 'medium',
    farms: 1_000,
    ...shape,
    containers: 6_000,
    consumers: 100_000,
    days: 30,
    layReportsPerHen: 5,
    depositsPerContainer: 6,
    withdrawalsPerContainer: 1,
    transfersPerContainer: 1,
    consumptionReports: 40_000,
  },
  /** MeshQL's stated national target: 10,105 farms, ~900k hens, 60,530 containers, 1M consumers, ~5.4M events. */
  national: {
    name: 'national',
    farms: 10_105,
    ...shape,
    containers: 60_530,
    consumers: 1_000_000,
    days: 30,
    layReportsPerHen: 5,
    depositsPerContainer: 6,
    withdrawalsPerContainer: 1,
    transfersPerContainer: 1,
    consumptionReports: 400_000,
  },
});

export function isPresetName(value: string): value is PresetName {
  return (presetNames as readonly string[]).includes(value);
}
