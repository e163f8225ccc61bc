// How long tests wait for work that needs only CPU time. The suite runs on shared 2-core machines whose
// load reaches 30, where everything takes about 15 times as long as on an idle machine; a timeout only
// has to catch a test that never ends, so these bounds are far above what the work takes when idle.
// No test asserts how fast something is.

/** A child Node process (a service, a CLI) until it answers: a fraction of a second to a few seconds idle. */
export const STARTUP_MS = 90_000;

/** A test that computes for a few seconds on an idle core (a bootstrap, a property run over many cases). */
export const CPU_BOUND_MS = 300_000;
