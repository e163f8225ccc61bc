import { Dataset, utcMidnight } from '../data/dataset.js';
import { isPresetName, presets } from '../data/presets.js';

/** Settings every baseline server reads from its environment. */
export interface BaselineEnv {
  readonly host: string;
  readonly port: number;
  /** The dataset to preload, or null for an empty server. */
  readonly dataset: Dataset | null;
}

export function readBaselineEnv(env: NodeJS.ProcessEnv = process.env): BaselineEnv {
  const port = Number.parseInt(env.PORT ?? '', 10);
  if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be set to a port number');
  const presetName = env.BARE_PRESET ?? '';
  let dataset: Dataset | null = null;
  if (presetName) {
    if (!isPresetName(presetName)) throw new Error(`unknown BARE_PRESET ${presetName}`);
    dataset = new Dataset({
      preset: presets[presetName],
      seed: Number.parseInt(env.BARE_SEED ?? '1', 10),
      anchorMs: env.BARE_ANCHOR ? Number(env.BARE_ANCHOR) : utcMidnight(),
    });
  }
  return { host: env.HOST ?? '127.0.0.1', port, dataset };
}
