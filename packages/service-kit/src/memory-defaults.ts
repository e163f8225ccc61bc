/**
 * What the services of `pnpm start` get unless the environment says otherwise (perf/README.md, round 4,
 * has the measurements): no watchdog thread in each service, since the stack's supervisor probes
 * /health and already kills and restarts a service that stops answering (a blocked event loop); a
 * 1 MiB V8 semi-space, which V8 otherwise grows to 16 MiB and keeps committed while the stack idles; and
 * two glibc malloc arenas (MALLOC_ARENA_MAX=2) instead of one per thread that allocates, which kept
 * 2–4 MiB more per service (perf/README.md, round 6). Set EGGMESH_EVENT_LOOP_STALL_MS, NODE_OPTIONS or
 * MALLOC_ARENA_MAX to choose otherwise. The bench's soak runs our services with these too, so its
 * memory figures are those of the stack as users start it.
 */
export function serviceMemoryDefaults(given: NodeJS.ProcessEnv): Record<string, string> {
  return {
    ...(given.EGGMESH_EVENT_LOOP_STALL_MS === undefined ? { EGGMESH_EVENT_LOOP_STALL_MS: '0' } : {}),
    ...(given.NODE_OPTIONS === undefined ? { NODE_OPTIONS: '--max-semi-space-size=1' } : {}),
    ...(given.MALLOC_ARENA_MAX === undefined ? { MALLOC_ARENA_MAX: '2' } : {}),
  };
}

/**
 * Node flags `pnpm start` puts before a service's script, by service name (V8 flags NODE_OPTIONS does not
 * accept). The projector runs without V8's optimizing compiler (`--no-opt`; the interpreter and the
 * baseline compiler remain): it takes no client traffic, and at ~0.86× the speed per log entry it still
 * keeps up with any write rate the write-api reaches, for ~7 MiB less idle RSS (the compiler's code pages
 * and its output). `--lite-mode` saved 2 MiB more but cost 0.6× the speed. perf/README.md, round 11, has
 * the measurements. A rebuild (`pnpm rebuild-projections`) is its own process with the full compiler, and
 * the services run by compose, by the bench's compared scenarios or by hand keep it too.
 */
export const serviceNodeFlags: Readonly<Record<string, readonly string[]>> = Object.freeze({
  projector: Object.freeze(['--no-opt']),
});
