/**
 * Top self-time functions and modules of V8 CPU profiles.
 *
 *   node perf/dist/profile-summary.js <file.cpuprofile | dir>... [--top 25] [--markdown] [--from-s N]
 *
 * A directory is searched recursively (e.g. a bench run's `profiles/` after `pnpm bench --cpu-prof --keep`).
 * `--from-s N` leaves out each profile's first N seconds (start-up, warm-up): what a server does while
 * measured, e.g. at a low rate, where start-up would otherwise outweigh it (perf/README.md, round 22).
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type CpuProfile,
  type ProfileSummary,
  profileMarkdown,
  summarizeProfile,
  summarizeProfilesIn,
} from './lib/cpuprofile.js';
import { repoRoot } from './lib/env.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '25' },
    markdown: { type: 'boolean', default: false },
    'from-s': { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
const usage =
  'usage: node perf/dist/profile-summary.js <file.cpuprofile | dir>... [--top N] [--markdown] [--from-s N]\n' +
  '  top self-time functions and modules of V8 CPU profiles (a directory is searched recursively);\n' +
  "  --from-s N leaves out each profile's first N seconds (start-up, warm-up)";
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const top = Number.parseInt(values.top, 10);
const fromMs = Number(values['from-s']) * 1000;
if (positionals.length === 0 || !Number.isFinite(top) || !Number.isFinite(fromMs) || fromMs < 0) {
  console.error(usage);
  process.exit(2);
}
const summaries: ProfileSummary[] = positionals.flatMap((path) =>
  statSync(path).isDirectory()
    ? summarizeProfilesIn(path, { top, root: repoRoot, fromMs })
    : [
        summarizeProfile(JSON.parse(readFileSync(path, 'utf8')) as CpuProfile, {
          top,
          root: repoRoot,
          fromMs,
          process: basename(dirname(path)),
          file: path,
        }),
      ],
);
for (const s of summaries) {
  if (values.markdown) {
    console.log(profileMarkdown(s, top).join('\n'));
    continue;
  }
  console.log(
    `\n== ${s.process} (${s.file})\n   busy ${s.busyMs.toFixed(0)} ms of ${s.totalMs.toFixed(0)} ms, GC ${s.gcMs.toFixed(0)} ms`,
  );
  for (const e of s.topFunctions)
    console.log(`${e.selfMs.toFixed(0).padStart(9)} ms ${e.busyPct.toFixed(1).padStart(5)}%  ${e.name}`);
  console.log('   -- by module');
  for (const e of s.topModules)
    console.log(`${e.selfMs.toFixed(0).padStart(9)} ms ${e.busyPct.toFixed(1).padStart(5)}%  ${e.name}`);
}
