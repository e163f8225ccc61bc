import { servicePlugin } from '@eggmesh/service-kit';
import type { FastifyInstance } from 'fastify';
import { Dataset, utcMidnight } from '../data/dataset.js';
import { isPresetName, presets } from '../data/presets.js';

/** Settings every baseline server reads from its environment. */
export interface BaselineEnv {
  readonly host: string;
  readonly port: number;
  /** The dataset to preload, or null for an empty server. */
  readonly dataset: Dataset | null;
  /** BARE_EQUIPPED=1: the server wears eggmesh's service plugin (see equip()). */
  readonly equipped: boolean;
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
  return { host: env.HOST ?? '127.0.0.1', port, dataset, equipped: env.BARE_EQUIPPED === '1' };
}

/**
 * With `env.equipped`, registers what every eggmesh service puts around its routes (servicePlugin:
 * security headers, CORS, overload shedding, metrics, UTF-8 JSON bodies) with the services' defaults
 * (no CORS origin, no rate limit, no trusted proxy), so a run tells what those cost from the rest.
 */
export async function equip(app: FastifyInstance, env: BaselineEnv): Promise<void> {
  if (!env.equipped) return;
  await app.register(servicePlugin, {
    config: { corsOrigin: false, rateLimitPerMin: 0, trustedProxies: [] },
    service: 'baseline',
  });
}
