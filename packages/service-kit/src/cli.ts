import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type ServiceName, type Setting, type SettingName, settingNames, settings } from './config.js';

/** One command-line option: what parseArgs needs, plus what `--help` says about it. */
export interface CliOption {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** What `--help` shows after the flag for a string option, e.g. `N` or `small|medium|large`. */
  readonly value?: string;
  readonly description: string;
}

/** An environment variable a command reads that is not an eggmesh setting (`settings`). */
export interface CliEnvVar {
  readonly name: string;
  readonly default: string;
  readonly description: string;
}

export interface CommandSpec<O extends Readonly<Record<string, CliOption>>> {
  /** How a user runs it, e.g. `pnpm seed` or `node services/read-api/dist/server.js`. */
  readonly command: string;
  /** What it does, a few lines. */
  readonly summary: string;
  readonly options?: O;
  /** Whose configuration it reads: `--help` lists those variables with their defaults. */
  readonly config?: ServiceName;
  /** Further eggmesh settings it reads itself (`--help` shows their defaults). */
  readonly env?: readonly SettingName[];
  /** Other variables it reads. */
  readonly otherEnv?: readonly CliEnvVar[];
}

type Values<O extends Readonly<Record<string, CliOption>>> = {
  -readonly [K in keyof O]?: O[K]['type'] extends 'boolean'
    ? boolean
    : O[K]['multiple'] extends true
      ? string[]
      : string;
};

export type CommandLine<O extends Readonly<Record<string, CliOption>>> =
  | { readonly kind: 'run'; readonly values: Values<O> }
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'error'; readonly text: string };

/** The text `--help` prints: usage, what the command does, its options and the variables it reads. */
export function formatUsage<O extends Readonly<Record<string, CliOption>>>(spec: CommandSpec<O>): string {
  const options = Object.entries(spec.options ?? {}) as [string, CliOption][];
  const flags: [string, string][] = options.map(([name, o]) => [
    `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`,
    `${o.description}${o.multiple ? ' (repeatable)' : ''}`,
  ]);
  flags.push(['-h, --help', 'print this help and exit']);
  const env: [string, string][] = [
    ...[...new Set([...(spec.config ? settingNames(spec.config) : []), ...(spec.env ?? [])])].map(
      (name): [string, string] => {
        const setting: Setting = settings[name];
        return [
          name,
          setting.default === undefined ? '(derived, see the docs)' : `default ${setting.default}`,
        ];
      },
    ),
    ...(spec.otherEnv ?? []).map((v): [string, string] => [v.name, `default ${v.default}: ${v.description}`]),
  ];
  const table = (rows: [string, string][]) => {
    const width = Math.max(...rows.map(([left]) => left.length));
    return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join('\n');
  };
  return [
    `Usage: ${spec.command}${options.length > 0 ? ' [options]' : ''}`,
    '',
    spec.summary,
    '',
    'Options:',
    table(flags),
    '',
    'Environment (every variable and its meaning: docs/configuration.md):',
    env.length > 0 ? table(env) : '  (none)',
    '',
  ].join('\n');
}

/**
 * Reads a command line against the spec without side effects: `--help`/`-h` asks for the usage; an
 * unknown flag, a missing value or a stray positional argument is an error (with the usage).
 */
export function readCommandLine<O extends Readonly<Record<string, CliOption>>>(
  spec: CommandSpec<O>,
  argv: readonly string[],
): CommandLine<O> {
  const config: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, o] of Object.entries(spec.options ?? {}) as [string, CliOption][]) {
    config[name] = {
      type: o.type,
      ...(o.short ? { short: o.short } : {}),
      ...(o.multiple ? { multiple: true } : {}),
    };
  }
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: config, strict: true, allowPositionals: false }));
  } catch (error) {
    return { kind: 'error', text: `${(error as Error).message}\n\n${formatUsage(spec)}` };
  }
  if (values.help === true) return { kind: 'help', text: formatUsage(spec) };
  delete values.help;
  return { kind: 'run', values: values as Values<O> };
}

/**
 * The first thing every eggmesh entry point does: `--help` prints the usage to stdout and exits 0
 * (nothing is started); a bad command line prints the problem and the usage to stderr and exits 2.
 */
export function parseCommandLine<O extends Readonly<Record<string, CliOption>>>(
  spec: CommandSpec<O>,
  argv: readonly string[] = process.argv.slice(2),
): Values<O> {
  const line = readCommandLine(spec, argv);
  if (line.kind === 'help') {
    process.stdout.write(line.text);
    process.exit(0);
  }
  if (line.kind === 'error') usageError(spec, line.text);
  return line.values;
}

/** A command line that parses but makes no sense (`--batch 0`): the problem and the usage on stderr, exit 2. */
export function usageError<O extends Readonly<Record<string, CliOption>>>(
  spec: CommandSpec<O>,
  message: string,
): never {
  process.stderr.write(message.includes('Usage: ') ? message : `${message}\n\n${formatUsage(spec)}`);
  process.exit(2);
}
