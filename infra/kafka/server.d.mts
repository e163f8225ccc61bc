import type { RunningChild } from '../child-server.d.mts';

export interface StartOptions {
  /** Broker port on 127.0.0.1; 0 (the default) takes a free one. */
  readonly port?: number;
  /** Controller port; default port + 1 for a fixed port, a free one otherwise. */
  readonly controllerPort?: number;
  /** Keep the log directory here (formatted on first use, reused after); default a fresh temporary one. */
  readonly dataDir?: string;
  /** JVM heap, default `512m`. */
  readonly heap?: string;
  /** Receives the broker's own log output (warnings and errors, and the started line). */
  readonly onLog?: (chunk: string) => void;
}

export interface RunningBroker extends RunningChild {
  /** Bootstrap address, `127.0.0.1:<port>`. */
  readonly brokers: string;
  readonly port: number;
  readonly controllerPort: number;
  readonly dataDir: string;
}

export declare const serverName: string;
export declare function ensureJars(): Promise<string>;
export declare function start(options?: StartOptions): Promise<RunningBroker>;
