export interface StartOptions {
  /** TCP port on 127.0.0.1; 0 (the default) takes a free one. */
  readonly port?: number;
  /** Keep the SQLite files here; without it they live in a temporary directory removed at stop. */
  readonly dataDir?: string;
  /** Receives the server's own log output. */
  readonly onLog?: (chunk: string) => void;
}

export interface RunningServer {
  readonly uri: string;
  readonly port: number;
  readonly pid: number | undefined;
  /** Milliseconds from spawn to the listening line (the build is not counted). */
  readonly startMs: number;
  /** Graceful stop (SIGTERM). */
  stop(): Promise<void>;
  /** A crash (SIGKILL), for fault tests. */
  kill(): Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export declare const serverName: string;
export declare function ensureBinary(): Promise<string>;
export declare function start(options?: StartOptions): Promise<RunningServer>;
