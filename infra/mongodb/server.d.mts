import type { RunningChild } from '../child-server.d.mts';

export interface StartOptions {
  /** TCP port on 127.0.0.1; 0 (the default) takes a free one. */
  readonly port?: number;
  /** Keep the data in `<dataDir>/mongodb.h2`; without it the data lives in memory. */
  readonly dataDir?: string;
  /** Enable the oplog (change streams); off by default, it costs a write per write. */
  readonly oplog?: boolean;
  /** Receives the server's own log output (warnings and errors). */
  readonly onLog?: (chunk: string) => void;
}

export interface RunningServer extends RunningChild {
  readonly uri: string;
  readonly port: number;
}

export declare const serverName: string;
export declare function ensureJars(): Promise<string>;
export declare function start(options?: StartOptions): Promise<RunningServer>;
