import type { RunningChild } from '../child-server.d.mts';

export interface StartOptions {
  /** TCP port on 127.0.0.1; 0 (the default) takes a free one. */
  readonly port?: number;
  /** Keep the SQLite files here; without it they live in a temporary directory removed at stop. */
  readonly dataDir?: string;
  /** A replica-set name to report (`--repl-set-name`); the uri then names it (`?replicaSet=`). */
  readonly replSetName?: string;
  /** Receives the server's own log output. */
  readonly onLog?: (chunk: string) => void;
}

export interface RunningServer extends RunningChild {
  readonly uri: string;
  readonly port: number;
}

export declare const serverName: string;
export declare function ensureBinary(): Promise<string>;
export declare function start(options?: StartOptions): Promise<RunningServer>;
