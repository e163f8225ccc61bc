import type { RunningChild } from '../child-server.d.mts';

export interface StartOptions {
  /** Bootstrap address of the Kafka cluster that holds the worker's state and the change topics. */
  readonly brokers: string;
  /** REST port on 127.0.0.1; 0 (the default) takes a free one. */
  readonly port?: number;
  /** The Connect cluster's group id, which also names its state topics; same group = same offsets. */
  readonly group?: string;
  /** Where the worker's properties live; default a fresh temporary directory. */
  readonly dataDir?: string;
  /** JVM heap, default `384m`. */
  readonly heap?: string;
  /** Receives the worker's own log output (warnings and errors). */
  readonly onLog?: (chunk: string) => void;
}

export interface RunningWorker extends RunningChild {
  /** The REST API, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  readonly group: string;
  readonly dataDir: string;
}

export declare const serverName: string;
export declare function ensureJars(): Promise<string>;
export declare function start(options: StartOptions): Promise<RunningWorker>;
