import type { DatasetCounts } from '../src/data/dataset.js';
import type { MachineFacts } from '../src/lib/env.js';

/** The machine and dataset counts of the reports the perf tests build (the small preset's entities). */
export const testMachine: MachineFacts = {
  cores: 2,
  cpuModel: 'test',
  memoryGiB: 4,
  os: 'Linux',
  node: 'v20',
  loadAverage: [0, 0, 0],
};

export const smallCounts: DatasetCounts = {
  farm: 50,
  coop: 150,
  hen: 4_500,
  container: 300,
  consumer: 5_000,
  lay_report: 0,
  storage_deposit: 0,
  storage_withdrawal: 0,
  container_transfer: 0,
  consumption_report: 0,
  actors: 0,
  events: 0,
  total: 36_900,
};
