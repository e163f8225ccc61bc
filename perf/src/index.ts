export { Dataset, type DatasetCounts, type Row, utcMidnight } from './data/dataset.js';
export { isPresetName, type PresetName, type PresetSpec, presetNames, presets } from './data/presets.js';
export { ensureDataset, GENERATOR_VERSION, generate, type Manifest, readManifest } from './generate.js';
export { type BenchReport, judgeTargets, renderMarkdown, type TargetCheck } from './lib/report.js';
export { barChartSvg } from './lib/svg.js';
export { scenarios } from './scenarios/index.js';
export { type ScenarioName, scenarioNames } from './scenarios/types.js';
