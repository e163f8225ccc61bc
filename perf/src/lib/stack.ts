import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { primaryEntities } from '@eggmesh/store-sqlite';
import { withDescendants } from '../../../infra/processes.mjs';
import { exists, freePort, perfScript, repoRoot } from './env.js';
import { ChildService } from './proc.js';

export type OurService = 'write-api' | 'read-api' | 'projector' | 'relay' | 'haproxy';
export type BaselineService = 'bare-rest' | 'bare-graphql';
export type ServiceName = OurService | BaselineService;

const isBaseline = (name: ServiceName): name is BaselineService =>
  name === 'bare-rest' || name === 'bare-graphql';

export const ourServices: readonly OurService[] = ['write-api', 'read-api', 'projector'];

/** How a scenario wants our services run, over the bench's own settings (a service started otherwise is restarted). */
export interface OurLaunch {
  /** Environment over the bench's own. */
  readonly env?: Readonly<Record<string, string>>;
  /** Node flags before a service's script, by service. */
  readonly nodeArgs?: Readonly<Partial<Record<OurService, readonly string[]>>>;
}

/** Where each of our services' built entry point lives (run from the repo root). */
export const ourEntries: Readonly<Record<OurService, string>> = {
  // BENCH_WRITE_API_ENTRY: measure another write-api build (A/B runs of the write path).
  'write-api': process.env.BENCH_WRITE_API_ENTRY ?? join(repoRoot, 'services/write-api/dist/server.js'),
  // The public port: it answers reads itself and forwards writes to the write-api.
  'read-api': join(repoRoot, 'services/read-api/dist/server.js'),
  projector: join(repoRoot, 'services/projector/dist/main.js'),
  relay: join(repoRoot, 'services/relay/dist/main.js'),
  // HAProxy with the configuration generated from the route table, in front of the write-api and the
  // read-api (as compose runs it), on its own port.
  haproxy: perfScript('haproxy-front.js'),
};

/**
 * Whether HAProxy can be measured: on PATH, and not turned off with BENCH_HAPROXY=0. Where it is
 * missing the latency scenario measures the read-api's forwarding alone and says so.
 */
export const haproxyAvailable: boolean =
  process.env.BENCH_HAPROXY !== '0' && spawnSync('haproxy', ['-v']).status === 0;

/** Entities the bare REST server keeps a table for (actors preloaded from the dataset, events empty). */
export const bareRestEntities = primaryEntities;

export interface StackOptions {
  /** Our services' EGGMESH_DATA_DIR (a working copy of the dataset). */
  readonly dataDir: string;
  readonly logDir: string;
  /** The file the bare REST server recreates at each start. */
  readonly bareDbFile: string;
  /** The dataset the baselines preload. */
  readonly dataset: { readonly preset: string; readonly seed: number; readonly anchorMs: number };
  /** Extra environment for our services (e.g. EGGMESH_LOG_LEVEL). */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** The log is on Kafka (`--log kafka`): the relay runs whenever the projector does, started first. */
  readonly relay?: boolean;
  /**
   * Write a V8 CPU profile of each server (ours and the baselines, for comparison) into
   * `<cpuProfileDir>/<service>/` (node --cpu-prof; written when the process exits after SIGTERM).
   */
  readonly cpuProfileDir?: string;
  /** The baselines register eggmesh's service plugin (`--equipped-baselines`). */
  readonly equippedBaselines?: boolean;
}

/** node flags that write a CPU profile into `dir` at exit. */
export function cpuProfArgs(dir: string | undefined): string[] {
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/**
 * BENCH_NODE_ARGS: extra node flags for our services only (e.g. `--max-semi-space-size=1`), to measure
 * what a V8 flag costs in throughput against the same baselines.
 */
export const ourNodeArgs: readonly string[] = (process.env.BENCH_NODE_ARGS ?? '')
  .split(/\s+/)
  .filter(Boolean);

/** What of `launch` concerns service `name`, as a string to compare. */
const launchKey = (name: ServiceName, launch: OurLaunch): string =>
  isBaseline(name) ? '' : JSON.stringify([launch.env ?? {}, launch.nodeArgs?.[name] ?? []]);

/** Which built entry points are missing (our services are built by `pnpm run build`). */
export function missingEntries(services: readonly OurService[]): string[] {
  return services.filter((s) => !exists(ourEntries[s])).map((s) => ourEntries[s]);
}

/**
 * Starts and stops the servers under test as child processes, so that each scenario runs with
 * exactly the processes it needs (e.g. no projector competing for the two cores during REST runs).
 */
export class Stack {
  readonly #options: StackOptions;
  readonly #running = new Map<ServiceName, ChildService>();
  /** How each running service of ours was started (its env and node flags, as JSON). */
  readonly #launchOf = new Map<ServiceName, string>();
  #ports: Record<ServiceName, number> | undefined;

  constructor(options: StackOptions) {
    this.#options = options;
  }

  async #allocatePorts(): Promise<Record<ServiceName, number>> {
    if (!this.#ports) {
      const names: ServiceName[] = [
        'write-api',
        'read-api',
        'projector',
        'relay',
        'haproxy',
        'bare-rest',
        'bare-graphql',
      ];
      const ports = await Promise.all(names.map(() => freePort()));
      this.#ports = Object.fromEntries(names.map((n, i) => [n, ports[i]])) as Record<ServiceName, number>;
    }
    return this.#ports;
  }

  /**
   * Runs exactly `requested` (and the relay beside the projector when the log is Kafka), our services
   * as `launch` says: one started otherwise is restarted.
   */
  async ensure(requested: readonly ServiceName[], launch: OurLaunch = {}): Promise<void> {
    const wanted =
      this.#options.relay && requested.includes('projector') && !requested.includes('relay')
        ? (['relay', ...requested] as const)
        : requested;
    for (const name of [...this.#running.keys()]) {
      // A baseline's key is always '': launches never restart it.
      if (!wanted.includes(name) || this.#launchOf.get(name) !== launchKey(name, launch))
        await this.stop(name);
    }
    for (const name of wanted) if (!this.#running.has(name)) await this.start(name, launch);
  }

  async start(name: ServiceName, launch: OurLaunch = {}): Promise<ChildService> {
    if (name === 'projector' && this.#options.relay && !this.#running.has('relay'))
      await this.start('relay', launch);
    const ports = await this.#allocatePorts();
    const o = this.#options;
    const port = ports[name];
    const common = { cwd: repoRoot, logFile: join(o.logDir, `${name}.log`) };
    let service: ChildService;
    if (isBaseline(name)) {
      service = await ChildService.start({
        ...common,
        name,
        entry: perfScript(`baselines/${name}.js`),
        env: {
          HOST: '127.0.0.1',
          PORT: String(port),
          BARE_PRESET: o.dataset.preset,
          BARE_SEED: String(o.dataset.seed),
          BARE_ANCHOR: String(o.dataset.anchorMs),
          BARE_DB: o.bareDbFile,
          BARE_ENTITIES: bareRestEntities.join(','),
          ...(o.equippedBaselines ? { BARE_EQUIPPED: '1' } : {}),
        },
        healthUrl: `http://127.0.0.1:${port}/health`,
        readyTimeoutMs: 300_000,
        nodeArgs: cpuProfArgs(o.cpuProfileDir && join(o.cpuProfileDir, name)),
      });
    } else {
      service = await ChildService.start({
        ...common,
        name,
        entry: ourEntries[name],
        env: {
          EGGMESH_HOST: '127.0.0.1',
          EGGMESH_DATA_DIR: o.dataDir,
          WRITE_API_PORT: String(ports['write-api']),
          READ_API_PORT: String(ports['read-api']),
          PROJECTOR_PORT: String(ports.projector),
          RELAY_PORT: String(ports.relay),
          BENCH_HAPROXY_PORT: String(ports.haproxy),
          EGGMESH_WRITE_API_URL: `http://127.0.0.1:${ports['write-api']}`,
          ...o.extraEnv,
          ...launch.env,
        },
        healthUrl: `http://127.0.0.1:${port}/health`,
        readyTimeoutMs: 120_000,
        nodeArgs: [
          ...(launch.nodeArgs?.[name] ?? []),
          ...ourNodeArgs,
          ...cpuProfArgs(o.cpuProfileDir && join(o.cpuProfileDir, name)),
        ],
      });
    }
    this.#running.set(name, service);
    this.#launchOf.set(name, launchKey(name, launch));
    return service;
  }

  async stop(name: ServiceName): Promise<void> {
    await this.#running.get(name)?.stop();
    this.#running.delete(name);
    this.#launchOf.delete(name);
  }

  url(name: ServiceName): string {
    if (!this.#running.has(name) || !this.#ports) throw new Error(`${name} is not running`);
    return `http://127.0.0.1:${this.#ports[name]}`;
  }

  pids(names: readonly ServiceName[]): number[] {
    return names.map((n) => {
      const service = this.#running.get(n);
      if (!service) throw new Error(`${n} is not running`);
      return service.pid;
    });
  }

  /** The processes of `names` and those they started (HAProxy under its wrapper), to count their CPU. */
  cpuPids(names: readonly ServiceName[]): number[] {
    return this.pids(names).flatMap(withDescendants);
  }

  isRunning(name: ServiceName): boolean {
    return this.#running.has(name);
  }

  async stopAll(): Promise<void> {
    for (const name of [...this.#running.keys()]) await this.stop(name);
  }
}
