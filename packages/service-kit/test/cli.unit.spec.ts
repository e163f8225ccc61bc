import {
  type CliOption,
  type CommandSpec,
  closestName,
  editDistance,
  formatUsage,
  knownEnvNames,
  readCommandLine,
  settings,
  toolEnvNames,
  unknownEnvWarnings,
  withoutUnknownEnv,
} from '@eggmesh/service-kit';
import { describe, expect, it } from 'vitest';

const spec = {
  command: 'pnpm example',
  summary: 'Does an example thing.',
  options: {
    size: { type: 'string', value: 'small|large', description: 'how big' },
    json: { type: 'boolean', description: 'print JSON' },
    tag: { type: 'string', multiple: true, value: 'T', description: 'a tag' },
  },
  env: ['EGGMESH_DATA_DIR', 'EGGMESH_WRITE_API_URL'],
  otherEnv: [{ name: 'EXAMPLE_TIMEOUT_S', default: '5', description: 'how long' }],
} as const satisfies CommandSpec<Readonly<Record<string, CliOption>>>;

describe('command line', () => {
  it('prints what the command does, its options and the variables it reads with their defaults', () => {
    const text = formatUsage(spec);
    expect(text.split('\n')[0]).toBe('Usage: pnpm example [options]');
    expect(text).toContain('Does an example thing.');
    expect(text).toMatch(/^ {2}--size small\|large +how big$/m);
    expect(text).toMatch(/^ {2}--json +print JSON$/m);
    expect(text).toMatch(/^ {2}--tag T +a tag \(repeatable\)$/m);
    expect(text).toMatch(/^ {2}-h, --help +print this help and exit$/m);
    expect(text).toContain('docs/configuration.md');
    expect(text).toMatch(/^ {2}EGGMESH_DATA_DIR +default \.\/data$/m);
    expect(text).toMatch(/^ {2}EGGMESH_WRITE_API_URL +\(derived, see the docs\)$/m);
    expect(text).toMatch(/^ {2}EXAMPLE_TIMEOUT_S +default 5: how long$/m);
  });

  it('answers --help and -h with the usage, whatever else is on the line', () => {
    for (const argv of [['--help'], ['-h'], ['--size', 'large', '--help']]) {
      expect(readCommandLine(spec, argv)).toEqual({ kind: 'help', text: formatUsage(spec) });
    }
  });

  it('refuses unknown flags, missing values and stray arguments, with the usage', () => {
    for (const [argv, problem] of [
      [['--sise', 'large'], /--sise/],
      [['--size'], /--size/],
      [['start'], /start/],
      [['--json=yes'], /--json/],
    ] as const) {
      const line = readCommandLine(spec, argv);
      expect(line.kind, argv.join(' ')).toBe('error');
      if (line.kind !== 'error') continue;
      expect(line.text).toMatch(problem);
      expect(line.text).toContain('Usage: pnpm example');
    }
  });

  it('returns the values it read, and nothing for flags not given', () => {
    expect(readCommandLine(spec, ['--size', 'large', '--tag', 'a', '--tag', 'b', '--json'])).toEqual({
      kind: 'run',
      values: { size: 'large', tag: ['a', 'b'], json: true },
    });
    expect(readCommandLine(spec, [])).toEqual({ kind: 'run', values: {} });
  });
});

describe('unknown EGGMESH_* variables', () => {
  it('knows every setting and the tools’ own variables', () => {
    expect(knownEnvNames()).toEqual([...Object.keys(settings), ...toolEnvNames]);
  });

  it('warns once per unknown name, naming the closest known one', () => {
    const warnings = unknownEnvWarnings({
      EGGMESH_DATADIR: '/tmp/x',
      EGGMESH_LOG_LEVL: 'debug',
      EGGMESH_HOST: '0.0.0.0',
      EGGMESH_FUZZ_SEED: '3',
      WRITE_API_PORT: '1',
      HOME: '/root',
    });
    expect(warnings).toEqual([
      'warning: EGGMESH_DATADIR is not an eggmesh setting and is ignored; did you mean EGGMESH_DATA_DIR? (every setting: docs/configuration.md)',
      'warning: EGGMESH_LOG_LEVL is not an eggmesh setting and is ignored; did you mean EGGMESH_LOG_LEVEL? (every setting: docs/configuration.md)',
    ]);
    expect(unknownEnvWarnings({ EGGMESH_HOST: 'x', EGGMESH_KAFKA_TOPIC: 't' })).toEqual([]);
  });

  it('can be left out of the environment a supervisor passes on', () => {
    expect(
      withoutUnknownEnv({ EGGMESH_DATADIR: 'x', EGGMESH_HOST: 'h', EGGMESH_FUZZ_SEED: '1', PATH: '/bin' }),
    ).toEqual({ EGGMESH_HOST: 'h', EGGMESH_FUZZ_SEED: '1', PATH: '/bin' });
  });

  it('picks the nearest name by edit distance', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('EGGMESH_LGO', 'EGGMESH_LOG')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(closestName('EGGMESH_STORAGE')).toBe('EGGMESH_STORE');
    expect(closestName('EGGMESH_SQLITE_SYNCH')).toBe('EGGMESH_SQLITE_SYNC');
    expect(closestName('EGGMESH_KAFKA_BROKER')).toBe('EGGMESH_KAFKA_BROKERS');
  });
});
