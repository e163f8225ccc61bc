import type { ChildProcess } from 'node:child_process';

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ChildOptions {
  /** How errors name the server, e.g. `the Kafka test broker`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Matched against what the server printed on stdout, and on its own against stderr. */
  readonly ready?: RegExp;
  /** Or asked every half second whether the server is ready (e.g. its HTTP API answers). */
  readonly probe?: () => Promise<boolean>;
  /** What a start that timed out does to the server; default SIGKILL. */
  readonly abort?: (child: ChildProcess) => void;
  readonly uid?: number;
  readonly gid?: number;
  readonly timeoutMs: number;
  /** How long a stop waits before it kills; default 10 s. */
  readonly stopTimeoutMs?: number;
  /** `pipe` (default: the server watches it and exits when this process dies) or `ignore`. */
  readonly stdin?: 'pipe' | 'ignore';
  readonly env?: NodeJS.ProcessEnv;
  /** Receives the server's own output. */
  readonly onLog?: (chunk: string) => void;
}

export interface StartedChild {
  readonly child: ChildProcess;
  /** What `ready` matched; null when `probe` said ready. */
  readonly match: RegExpExecArray | null;
  /** Milliseconds from spawn to the ready line. */
  readonly startMs: number;
  readonly exited: Promise<Exit>;
  stopWith(signal: NodeJS.Signals): Promise<void>;
  /** The tail of what the server printed. */
  output(): string;
}

/** What every started server answers, besides its own addresses. */
export interface RunningChild {
  readonly pid: number | undefined;
  /** Milliseconds from spawn to ready (a build or fetch before it is not counted). */
  readonly startMs: number;
  /** Graceful stop (SIGTERM). */
  stop(): Promise<void>;
  /** A crash (SIGKILL), for fault tests. */
  kill(): Promise<void>;
  readonly exited: Promise<Exit>;
}

export declare function prepare(script: string, what: string, timeoutMs: number): Promise<string>;
export declare function startChild(options: ChildOptions): Promise<StartedChild>;
export declare function serveFromCommandLine(server: RunningChild, line: string): Promise<void>;
