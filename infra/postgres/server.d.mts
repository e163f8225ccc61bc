export interface StartOptions {
  /** TCP port on 127.0.0.1; 0 (the default) takes a free one. */
  readonly port?: number;
  /** Keep the cluster in `<dataDir>/cluster` (initialised on first use); default a fresh temporary one. */
  readonly dataDir?: string;
  /** Receives the server's own log output (warnings and errors, and the ready line). */
  readonly onLog?: (chunk: string) => void;
}

export interface RunningPostgres {
  /** A connection URL for `database` (default `postgres`), as the superuser, trusted on 127.0.0.1. */
  url(database?: string): string;
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly dataDir: string;
  /** The postmaster's pid. */
  readonly pid: number | undefined;
  /** Milliseconds from spawn to "ready to accept connections" (initdb not included). */
  readonly startMs: number;
  /** Fast shutdown (SIGINT). */
  stop(): Promise<void>;
  /** A crash (SIGKILL of the postmaster), for fault tests. */
  kill(): Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export declare const superuser: string;
export declare function binDir(): string;
export declare function serverName(): string;
export declare function start(options?: StartOptions): Promise<RunningPostgres>;
export declare function prepareLegacyDatabase(server: RunningPostgres, database?: string): Promise<void>;
